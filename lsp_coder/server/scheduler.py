"""Debounce (``debounce``), supersede and cancel completion requests; one inference worker
thread.

Every request gets an answer. A newer request for the same document supersedes an older one:
the older one is answered at once with an empty result and its decode is aborted. A request that
types along a shown suggestion is answered from the suggestion cache without waiting, and the
engine confirms and extends that suggestion in the background when it is idle.

Idle work comes last (``idle_runner``, planned by ``idle_plan``): after an answer the completion
layer names the prompts the next keystroke will probably need (Enter, accepting the suggestion, a
file just opened); when no request is pending or running and the user has paused for
``idle.start_after_ms``, the worker prefills them one at a time. A request that arrives stops the
running prefill within one ubatch. What the worker and the loop share is ``WorkerState``; what a
request runs on the worker is ``request_job``'s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from typing import Callable

from ..completion.next_prompts import past_indentation
from ..completion.service import CompletionRequest, CompletionService, Suggestion
from ..config import IdleConfig
from ..shared_types import StopReason
from .debounce import Debounce
from .host import EngineHost
from .idle_runner import Ahead, IdleRunner, resolve
from .request_job import Pending, cursor_line, request_job
from .stats import Stats
from .worker_state import WorkerState

log = logging.getLogger(__name__)

MAX_PENDING = 8
"""Requests one session may have waiting at once (each for another document); a newer one
supersedes the oldest, so a client that floods the server holds a bounded share of it."""


class Scheduler:
    """One editor session's requests, run on the worker its ``host`` shares with the others."""

    def __init__(self, service: CompletionService, stats: Stats, host: EngineHost,
                 debounce_ms: Callable[[], float],
                 idle: Callable[[], IdleConfig] = IdleConfig,
                 loading: Callable[[], asyncio.Future | None] = lambda: None) -> None:
        self.service = service
        self.stats = stats
        self.host = host
        self._loading = loading
        """Done when the load of the session's model ends; None while none is under way."""
        self._idle_config = idle
        self._state: WorkerState[Pending] = host.state
        self.idle = IdleRunner(service, stats, host.worker, host.state, idle, host.idle_turns)
        self._pending: dict[str, Pending] = {}
        self.debounce = Debounce(debounce_ms)

    # -- worker access --------------------------------------------------------------------------

    async def run(self, fn: Callable, *args):
        """Run ``fn(*args)`` on the worker thread (model loads, cache forgets, ...)."""
        return await self.host.run(fn, *args)

    def shutdown(self) -> None:
        """The session ends: its requests are answered empty and its work stops (the worker
        goes on for the other sessions)."""
        for uri in list(self._pending):
            self._supersede(uri)
        running = self._state.running
        if running is not None and running.owner is self:
            running.token.set()
        self.idle.end()

    @property
    def loading(self) -> bool:
        """Whether a model load (with its messages to the client) is still under way."""
        return self._loading() is not None

    @property
    def has_pending(self) -> bool:
        """Whether a request of this session waits for its answer."""
        return bool(self._pending)

    @property
    def idle_running(self) -> bool:
        """Whether an idle prefill is on the worker now."""
        return self.idle.running

    @property
    def idle_queued(self) -> int:
        """Idle jobs waiting for their turn."""
        return len(self.idle.queue)

    @property
    def busy(self) -> bool:
        """Whether engine work is queued or running (background work included)."""
        return self._state.busy

    # -- requests -------------------------------------------------------------------------------

    async def complete(self, req: CompletionRequest, kind: str,
                       hard_budget_ms: float | None = None) -> Suggestion:
        """Answer a completion request; an empty text when superseded or cancelled.

        With ``hard_budget_ms`` the answer comes within that time, empty if nothing is ready.
        A request the user invoked (``req.invoked``: a key, not typing) starts without the
        debounce; one that asks for ``req.alternatives`` goes to the engine, which samples them
        from the prompt it reads for the first suggestion (a cached or prefetched answer has
        one).
        """
        start = time.perf_counter()
        self.debounce.note_request(req.uri)
        ahead = None if req.alternatives else self.idle.prefetch_for(req)
        # A cursor job of this document is reading the prompt this request starts from: the
        # chunk it is on finishes (and stays cached) instead of being thrown away.
        running = self.idle.job
        finish_chunk = running is not None and running.kind == "cursor" and running.uri == req.uri
        # Only the running prefetch is kept; a finished one answers at once, and the idle job
        # running now (a guess at another key) stops as for any request.
        self.idle.user_active(req.uri, keep_job=ahead is not None and ahead is self.idle.ahead,
                              finish_chunk=finish_chunk)
        cached = None if req.alternatives else self.service.cached(req)
        if cached is not None:
            self._supersede(req.uri, keep_background=True)
            cached.latency_ms = (time.perf_counter() - start) * 1000
            self.stats.record(kind, text=cached.text, cached=True, latency_ms=cached.latency_ms,
                              stats=None, outcome="ok")
            self._confirm_in_background(req, cached.text)
            self.idle.answered(req, cached.text)
            return cached
        line = cursor_line(req.text, req.offset)
        self._supersede(req.uri, reading_at=line)
        waiting = [p for p in self._pending.values() if not p.answer.done()]
        if len(waiting) >= MAX_PENDING:
            self._supersede(waiting[0].uri)
        loop = asyncio.get_running_loop()
        pending = Pending(req.uri, self, loop.create_future(), line)
        self._pending.pop(req.uri, None)  # (an entry superseded above: the newest goes last)
        self._pending[req.uri] = pending
        outcome = "ok"
        delay = 0.0
        try:
            if ahead is not None:
                self._take_ahead(ahead, req, pending, loop)
            else:
                loading = self._loading()
                if loading is not None:
                    await asyncio.wait((pending.answer, loading),
                                       return_when=asyncio.FIRST_COMPLETED)
                delay = 0.0 if req.invoked else self.debounce.seconds(
                    req.uri, self.service.shared_engine)
                if delay > 0:
                    try:
                        await asyncio.wait_for(asyncio.shield(pending.answer), timeout=delay)
                    except TimeoutError:
                        pass
                if not pending.answer.done():
                    self._start(req, pending, loop, finish_idle_chunk=finish_chunk)
            if hard_budget_ms is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(pending.answer),
                                           timeout=max(0.0, hard_budget_ms / 1000 - delay))
                except TimeoutError:  # answer empty now; the work goes on into the cache
                    resolve(pending.answer, Suggestion("", stop_reason=StopReason.TIME_BOX))
            suggestion = await pending.answer
            if suggestion.stop_reason == StopReason.SUPERSEDED:
                outcome = "superseded"
            elif suggestion.extra.get("unsure"):
                outcome = "unsure"
        except asyncio.CancelledError:
            pending.cancel(running=pending is self._state.running)
            self.stats.record(kind, text="", cached=False,
                              latency_ms=(time.perf_counter() - start) * 1000,
                              stats=None, outcome="cancelled", invoked=req.invoked)
            raise
        finally:
            if self._pending.get(req.uri) is pending:
                del self._pending[req.uri]
        suggestion.latency_ms = (time.perf_counter() - start) * 1000
        cancelled = suggestion.stop_reason == StopReason.CANCELLED
        if outcome in ("ok", "unsure") and not cancelled:
            self.debounce.note_latency(suggestion.latency_ms)
        self.stats.record(kind, text=suggestion.text, cached=False,
                          latency_ms=suggestion.latency_ms, stats=suggestion.stats,
                          outcome="cancelled" if cancelled else outcome,
                          prefetch_taken=ahead is not None, invoked=req.invoked,
                          debounce_ms=delay * 1000, alternatives=len(suggestion.alternatives),
                          alternatives_evaluated_tokens=suggestion.extra.get(
                              "alternatives_evaluated_tokens", 0))
        if outcome in ("ok", "unsure") and suggestion.stop_reason not in (
                StopReason.CANCELLED, StopReason.ERROR, StopReason.NO_MODEL):
            self.idle.answered(req, suggestion.text)
        return suggestion

    def _take_ahead(self, ahead: Ahead, req: CompletionRequest, pending: Pending,
                    loop: asyncio.AbstractEventLoop) -> None:
        """Answer ``pending`` from the prefetch of its state, running or finished: its early
        lines if the budget ran out, then its suggestion; start the engine as usual if the
        prefetch ends without one (stopped by another request, or its prefill did not
        finish)."""
        ahead.taker = pending
        if ahead.early is not None:
            resolve(pending.answer, ahead.early)

        def finished(result: asyncio.Future) -> None:
            suggestion = result.result()
            if pending.answer.done() or pending.token.is_set():
                return
            if suggestion is None or suggestion.stop_reason == StopReason.CANCELLED:
                self._start(req, pending, loop)
            else:
                resolve(pending.answer, suggestion)

        ahead.result.add_done_callback(finished)

    def _start(self, req: CompletionRequest, pending: Pending,
               loop: asyncio.AbstractEventLoop, hint: str = "",
               finish_idle_chunk: bool = False) -> None:
        job = request_job(self.service, self.stats, self._state, self.idle, req, pending, loop,
                          hint)
        self._state.job_queued()
        self.idle.stop(finish_chunk=finish_idle_chunk)
        self.idle.turns.stop_others(self.idle)
        try:
            future = self.host.submit(job)
        except RuntimeError:  # shut down
            self._state.job_done()
            raise
        future.add_done_callback(_log_failure)

    def _supersede(self, uri: str, keep_background: bool = False,
                   reading_at: int | None = None) -> None:
        old = self._pending.get(uri)
        running = self._state.running
        shared = (running is not None and reading_at is not None
                  and running.shares_read(self, uri, reading_at))
        if old is not None and not old.answer.done():
            if not (shared and old is running):
                old.token.set()
            resolve(old.answer, Suggestion("", stop_reason=StopReason.SUPERSEDED))
        # Work nobody waits for (a time-boxed rest, a background confirm, the request just
        # superseded) yields to any request, except one served from the cache for the same
        # document: that work feeds the cache. Where the request will read a prompt of the same
        # document near the work's cursor (``reading_at``: its line), a read of the prompt under
        # way goes on first (the request shares it, and it stays cached); past it, or after a
        # jump, the work stops at once.
        if running is not None and running.unawaited():
            if keep_background and running.owner is self and running.uri == uri:
                return
            if shared:
                running.yielding.set()
            else:
                running.token.set()

    def forget(self, uri: str) -> None:
        """A document closed: answer its pending request and drop its timing and idle work."""
        self._supersede(uri)
        self.debounce.forget(uri)
        self.idle.forget(uri)

    # -- where the user is ----------------------------------------------------------------------

    def opened(self, uri: str, path: str, text: str) -> None:
        """A file was opened: idle work prepares the prompt part its first request will share."""
        self.idle.opened(uri, path, text)

    def cursor_moved(self, uri: str, path: str, text: str, offset: int) -> None:
        """The client reported where the cursor rests (not a completion request): idle work
        prepares the prompt a request there would read, and work nobody waits for (a
        background confirm, a time-boxed rest, a cancelled read) stops unless a request there
        would share its read (``Pending.shares_read``)."""
        if not self.idle.cursor_moved(uri, path, text, offset):
            return
        request = self._state.running
        if request is not None and request.unawaited() and not request.shares_read(
                self, uri, cursor_line(text, offset)):
            request.token.set()

    def _confirm_in_background(self, req: CompletionRequest, remainder: str) -> None:
        """Let the engine confirm and extend a typed-through suggestion when it is idle.

        Not on a shared serving engine: there it would be a request per key typed through.
        Where the suggestion goes on with indentation on a line of only whitespace, past it
        (``past_indentation``): the prompt the first key of code there reads.
        """
        if (self._state.running is not None or not self.service.loaded
                or self.service.shared_engine):
            return
        text, offset, remainder = past_indentation(req.text, req.offset, remainder)
        if offset != req.offset:
            req = replace(req, text=text, offset=offset)
        loop = asyncio.get_running_loop()
        pending = Pending(req.uri, self, loop.create_future(), cursor_line(text, offset),
                          background=True)
        self._start(req, pending, loop, hint=remainder)


def _log_failure(future: asyncio.Future) -> None:
    """A worker job's done callback: log an exception (a job cancelled at shutdown is not one)."""
    if not future.cancelled() and future.exception() is not None:
        log.error("job: %s", future.exception())
