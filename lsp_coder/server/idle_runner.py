"""Runs idle work on the inference worker: prefills (and prefetches) the queue's prompts, one at a
time, when no request is pending or running and the user has paused for ``idle.start_after_ms``.

A request stops the running job within one ubatch (or after its chunk, when it will read what the
chunk holds), except a request for exactly the state a prefetch is generating: that one takes
the prefetch's answer (``Ahead``). What to queue is ``idle_plan``'s; this module keeps the queue,
the running job and the finished prefetches, all on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..completion.next_prompts import NextPrompt
from ..completion.service import CompletionRequest, CompletionService, Suggestion
from ..config import IdleConfig
from ..shared_types import StopReason
from . import idle_plan
from .idle_turns import IdleTurns
from .stats import Stats
from .worker_state import WorkerState

log = logging.getLogger(__name__)

PREFETCHES_KEPT = 2
"""Finished prefetches a request for exactly their state can still take (Enter's and the
accept branch's, which run one after the other)."""


@dataclass(slots=True)
class Ahead:
    """A running idle job that will generate the suggestion for one document state (a
    prefetched branch). A request for exactly that state takes its answer instead of stopping
    it and starting over."""

    uri: str
    """The document."""
    result: asyncio.Future
    """The prefetched Suggestion; None when the job generated none (its prefill stopped)."""
    text: str | None = None
    """The branch's document text, set once the worker has built it."""
    offset: int = -1
    """The branch's cursor, set with ``text``."""
    early: Suggestion | None = None
    """The complete lines it had when the inline budget ran out, if that came first."""
    taker: Any = None
    """The request waiting on it (the scheduler's pending request), if one is."""

    def matches(self, req: CompletionRequest) -> bool:
        """Whether ``req`` asks for exactly this state and the job has (or may still get) an
        answer for it."""
        return (req.uri == self.uri and req.offset == self.offset and self.answered() is not False
                and self.text is not None and req.text == self.text)

    def answered(self) -> bool | None:
        """None while the job runs; then whether it generated a suggestion (an empty one
        counts: the suggestion cache keeps only non-empty ones)."""
        if not self.result.done():
            return None
        made = self.result.result()
        return made is not None and made.stop_reason != StopReason.CANCELLED

    def answer_early(self, suggestion: Suggestion) -> None:
        self.early = suggestion
        if self.taker is not None:
            resolve(self.taker.answer, suggestion)


class IdleRunner:
    """The idle queue and the one idle job at a time (event loop side; the job runs on the
    worker)."""

    def __init__(self, service: CompletionService, stats: Stats, worker: ThreadPoolExecutor,
                 state: WorkerState, config: Callable[[], IdleConfig],
                 turns: IdleTurns) -> None:
        self.service = service
        self.stats = stats
        self._worker = worker
        self._state = state
        self._config = config
        self.turns = turns
        """Whose idle work runs when several sessions share the worker (this one joins)."""
        self.queue: idle_plan.Queue = []
        """The prompts to prepare, in order (see ``idle_plan``)."""
        self.job: NextPrompt | None = None
        """The idle job on the worker now."""
        self.focus: str | None = None
        """The document the user is in: last opened, hinted or asked."""
        self.ahead: Ahead | None = None
        """The running idle job, when it prefetches a suggestion a request may take."""
        self.prefetched: deque[Ahead] = deque(maxlen=PREFETCHES_KEPT)
        """Finished prefetches, newest last."""
        self._token: threading.Event | None = None  # set: the running job stops
        self._stop_soon: threading.Event | None = None  # set: it stops after its chunk
        turns.join(self)

    @property
    def running(self) -> bool:
        """Whether an idle job is on the worker now."""
        return self._token is not None

    def prefetch_for(self, req: CompletionRequest) -> Ahead | None:
        """The running or a finished prefetch of exactly ``req``'s state, if any."""
        return next((a for a in (self.ahead, *reversed(self.prefetched))
                     if a is not None and a.matches(req)), None)

    # -- events ---------------------------------------------------------------------------------

    def user_active(self, uri: str, keep_job: bool = False, finish_chunk: bool = False) -> None:
        """A request came: idle work stops, another session's too (unless it is generating
        exactly what the request asks for) and its plan is stale (other files' windows and
        cursors stay)."""
        self.turns.active(self)
        self.turns.stop_others(self)
        self.focus = uri
        self.queue = idle_plan.on_request(self.queue, uri)
        if not keep_job:
            self.stop(finish_chunk=finish_chunk)

    def answered(self, req: CompletionRequest, shown: str) -> None:
        """After an answer: its branches come first; a window or cursor being prefilled
        yields to them."""
        if not self._config().enabled or not self.service.prefills:
            return
        self.turns.active(self)
        plan = idle_plan.on_answer(self.queue, self.service.next_prompts(req, shown), req.uri,
                                   self.job)
        self._apply(plan)

    def opened(self, uri: str, path: str, text: str) -> None:
        """A file was opened: prepare the prompt part its first request will share."""
        self.focus = uri
        config = self._config()
        if not config.enabled or not config.window or not self.service.prefills:
            return
        self.queue = idle_plan.on_open(self.queue, self.service.opened(uri, path, text))
        self.schedule()

    def cursor_moved(self, uri: str, path: str, text: str, offset: int) -> bool:
        """The client reported where the cursor rests: prepare the prompt a request there
        would read (``idle_plan.on_cursor``); False when idle work is off."""
        self.focus = uri
        if not self._config().enabled or not self.service.prefills:
            return False
        self.turns.active(self)
        self.turns.stop_others(self, measure=False)
        cursor = self.service.cursor_at(uri, path, text, offset)
        self._apply(idle_plan.on_cursor(self.queue, cursor, self.job))
        return True

    def end(self) -> None:
        """The session ended: its queue empties, its running job stops, another session's
        idle work may run."""
        self.queue.clear()
        self.stop(measure=False)
        self.turns.leave(self)
        self.turns.schedule()

    def forget(self, uri: str) -> None:
        """A document closed: drop its idle work (a cursor job running for it plans no full
        prompt after it)."""
        if self.focus == uri:
            self.focus = None
        self.queue = idle_plan.on_close(self.queue, uri)
        for ahead in [a for a in self.prefetched if a.uri == uri]:
            self.prefetched.remove(ahead)

    def _apply(self, plan: idle_plan.Plan) -> None:
        if plan.stop != "no":
            self.stop(measure=False, finish_chunk=plan.stop == "after_chunk")
        self.queue = plan.queue
        self.schedule()

    # -- the job --------------------------------------------------------------------------------

    def stop(self, measure: bool = True, finish_chunk: bool = False) -> None:
        """Stop the running idle job within its ubatch, or with ``finish_chunk`` after it;
        ``measure``: the next request counts the ubatches it waited (``idle_preempted``)."""
        token, soon = self._token, self._stop_soon
        if token is None or token.is_set():
            return
        if finish_chunk and soon is not None:
            if soon.is_set():
                return
            soon.set()
        else:
            token.set()
        if measure:
            self._state.mark_preempted(self.service.ubatches_done())

    def schedule(self) -> None:
        """Start the next idle job (this session's or another's) once the worker is free and
        the user has paused (``IdleTurns.schedule``)."""
        self.turns.schedule()

    def ready_in(self, last_activity: float) -> float | None:
        """Seconds until this session's next idle job may start, the user having been active
        last at ``last_activity``; None when it has nothing to do."""
        config = self._config()
        if not config.enabled:
            self.queue.clear()
            return None
        if not self.queue:
            return None
        return last_activity + config.start_after_ms / 1000 - time.monotonic()

    def start_next(self) -> None:
        """Run the first queued job now (``IdleTurns`` saw the worker free)."""
        self._run(self.queue.pop(0), self._config(), asyncio.get_running_loop())

    def _run(self, nxt: NextPrompt, config: IdleConfig, loop: asyncio.AbstractEventLoop) -> None:
        token, soon = threading.Event(), threading.Event()
        self._token, self._stop_soon = token, soon
        self.job = nxt
        self._state.mark_preempted(None)
        in_view = idle_plan.in_view(nxt, self.focus)
        prefetch = config.prefetch and nxt.kind in ("enter", "accept")
        ahead = Ahead(nxt.uri, loop.create_future()) if prefetch and config.take_prefetch else None
        self.ahead = ahead
        read_short = False

        def publish(text: str, offset: int) -> None:
            assert ahead is not None
            ahead.text, ahead.offset = text, offset

        def early(suggestion: Suggestion) -> None:
            assert ahead is not None
            loop.call_soon_threadsafe(ahead.answer_early, suggestion)

        def job() -> None:
            nonlocal read_short
            made = None
            try:
                state = nxt.state()
                if ahead is not None:
                    loop.call_soon_threadsafe(publish, *state)
                result = self.service.prefill(nxt, state, token.is_set, soon.is_set, in_view)
                ready = result is not None and result.outcome in ("done", "cached")
                read_short = ready and nxt.kind in ("cursor", "full") and result.short_prompt
                if result is not None:
                    self.stats.record_idle(nxt.kind, result)
                    log.debug("idle %s%s: %s, prompt %d reused %d evaluated %d in %.0f ms",
                              nxt.kind, " (in view)" if in_view else "", result.outcome,
                              result.prompt_tokens, result.reused_tokens,
                              result.evaluated_tokens, result.prefill_ms)
                if prefetch and ready:
                    made = self.service.prefetch(nxt, state, token.is_set,
                                                 answer_early=early if ahead else None)
                    if made.stats is not None:
                        self.stats.record_prefetch(made.stats, bool(made.text))
            except Exception:  # idle work must never take the server down
                log.exception("idle work failed")
            finally:
                if ahead is not None:
                    loop.call_soon_threadsafe(resolve, ahead.result, made)

        def done(_future) -> None:
            if self._token is token:
                self._token = self._stop_soon = None
                self.job = None
            self.queue = idle_plan.after_job(self.queue, nxt, read_short, token.is_set(),
                                             self.focus, self.service.full_at)
            if self.ahead is ahead:
                self.ahead = None
            if ahead is not None:
                self.prefetched.append(ahead)
            self.schedule()

        try:
            future = loop.run_in_executor(self._worker, job)
        except RuntimeError:  # shut down
            self._token = self._stop_soon = None
            self.job = None
            self.ahead = None
            return
        future.add_done_callback(done)


def resolve(future: asyncio.Future, value: Suggestion | None) -> None:
    """Set ``future``'s result unless it has one."""
    if not future.done():
        future.set_result(value)
