"""One completion request's work for the inference worker: what the scheduler keeps of it
(``Pending``) and the job that runs it on the worker (``request_job``)."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import Callable

from ..completion.service import CompletionRequest, CompletionService, Suggestion
from ..shared_types import StopReason
from .idle_runner import IdleRunner, resolve
from .stats import Stats
from .worker_state import WorkerState

log = logging.getLogger(__name__)

SHARED_READ_LINES = 4
"""A request of the same document whose cursor is at most this many lines from a running
read's shares that read (a key moves the cursor a line at most, a small paste a few); farther
(a jump), its prompt's window shares little of it."""


@dataclass(slots=True)
class Pending:
    """One request's work."""

    uri: str
    """The document."""
    owner: object
    """The session's scheduler it came from, told apart by identity (sessions may share a
    worker and a URI)."""
    answer: asyncio.Future
    """Resolved once with the Suggestion to answer."""
    line: int = -1
    """The cursor's line (-1: unknown)."""
    background: bool = False
    """Work nobody waits for (a background confirm)."""
    token: threading.Event = field(default_factory=threading.Event)
    """Set: the work stops (polled between decode steps and ubatches)."""
    yielding: threading.Event = field(default_factory=threading.Event)
    """Set: the work stops once its prompt is read (a read under way goes on and stays
    cached: a request of the same document will read it too), and at once after that."""

    def unawaited(self) -> bool:
        """Nobody waits for this work's answer: background work, or work answered already (a
        time-boxed rest, a superseded request)."""
        return self.background or self.answer.done()

    def shares_read(self, owner: object, uri: str, line: int) -> bool:
        """Whether a request of ``owner`` at ``line`` of ``uri`` reads much of this work's
        prompt: the same session and document, the cursor within ``SHARED_READ_LINES`` lines
        (either line unknown: as near)."""
        return owner is self.owner and uri == self.uri and (
            line < 0 or self.line < 0 or abs(line - self.line) <= SHARED_READ_LINES)

    def cancel(self, running: bool) -> None:
        """The client cancelled the request (editors do at the next key): ``running``, it
        still reads its prompt to the end, which the next key's request shares; queued, it
        never starts. Answered at once."""
        (self.yielding if running else self.token).set()
        resolve(self.answer, Suggestion("", stop_reason=StopReason.CANCELLED))


def cursor_line(text: str, offset: int) -> int:
    """The line of a cursor at ``offset`` (a str index) of ``text``."""
    return text.count("\n", 0, offset)


def request_job(service: CompletionService, stats: Stats, state: WorkerState[Pending],
                idle: IdleRunner, req: CompletionRequest, pending: Pending,
                loop: asyncio.AbstractEventLoop, hint: str = "") -> Callable[[], None]:
    """The worker's job for ``pending``: it completes ``req`` (``hint``: a draft) unless the
    request was answered or stopped meanwhile, answers it on ``loop``, and then lets ``idle``
    schedule its next job."""

    def answer(suggestion: Suggestion) -> None:
        loop.call_soon_threadsafe(resolve, pending.answer, suggestion)

    def job() -> None:
        try:
            run_job()
        finally:
            state.job_done()
            loop.call_soon_threadsafe(idle.schedule)

    def run_job() -> None:
        if pending.answer.done() or pending.token.is_set():
            return
        preempted_at = state.take_preempted()
        if preempted_at is not None and not pending.background:
            stats.idle_preempted(service.ubatches_done() - preempted_at)
        state.set_running(pending)
        try:
            result = service.complete(req, answer_early=answer, hint=hint,
                                      cancelled=pending.token.is_set,
                                      yielding=pending.yielding.is_set)
        except Exception:  # never leave a request unanswered
            log.exception("completion failed")
            result = Suggestion("", stop_reason=StopReason.ERROR)
        finally:
            state.set_running(None)
        # Work whose answer went out before it finished (background, time box, superseded)
        # still counts in the engine totals.
        if result.stats is not None and (pending.unawaited() or result.extra.get("answered_early")):
            stats.record_background(result.stats)
        answer(result)

    return job
