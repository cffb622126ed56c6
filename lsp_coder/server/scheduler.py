"""Debounce, supersede and cancel completion requests; one inference worker thread.

Every request gets an answer. A newer request for the same document supersedes an older one:
the older one is answered at once with an empty result and its decode is aborted. A request that
types along a shown suggestion is answered from the suggestion cache without waiting, and the
engine confirms and extends that suggestion in the background when it is idle.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from ..completion.service import CompletionRequest, CompletionService, Suggestion
from .stats import Stats

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _DocTiming:
    last_request: float = 0.0
    interval_ms: float = 1000.0


@dataclass(slots=True)
class _Pending:
    uri: str
    answer: asyncio.Future
    background: bool = False
    token: threading.Event = field(default_factory=threading.Event)


class Scheduler:
    """Owns the worker thread that owns the engine (through ``service``)."""

    def __init__(self, service: CompletionService, stats: Stats,
                 debounce_ms: Callable[[], float]) -> None:
        self.service = service
        self.stats = stats
        self._debounce_ceiling = debounce_ms
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lsp-coder-engine")
        self._pending: dict[str, _Pending] = {}
        self._running: _Pending | None = None
        self._timing: dict[str, _DocTiming] = {}
        self._recent_latency_ms = 1000.0
        self._jobs = 0
        self._jobs_lock = threading.Lock()

    # -- worker access --------------------------------------------------------------------------

    async def run(self, fn: Callable, *args):
        """Run ``fn(*args)`` on the worker thread (model loads, cache forgets, ...)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, fn, *args)

    def shutdown(self) -> None:
        running = self._running
        if running is not None:
            running.token.set()
        self._worker.shutdown(wait=False, cancel_futures=True)

    @property
    def busy(self) -> bool:
        """Whether engine work is queued or running (background work included)."""
        with self._jobs_lock:
            return self._jobs > 0

    # -- requests -------------------------------------------------------------------------------

    def debounce_s(self, uri: str) -> float:
        """How long to wait before starting the engine for a request on ``uri``.

        No wait when the client already spaces its requests (e.g. Neovim's 200 ms) or the user
        types slowly; the full ceiling while the user types fast; half of it when answers have
        been fast recently, since a wasted start then costs little.
        """
        ceiling = self._debounce_ceiling()
        timing = self._timing.get(uri)
        if ceiling <= 0 or timing is None or timing.interval_ms >= ceiling:
            return 0.0
        wait = ceiling / 2 if self._recent_latency_ms < 150 else ceiling
        return wait / 1000

    def _note_request(self, uri: str) -> None:
        now = time.monotonic()
        timing = self._timing.setdefault(uri, _DocTiming(last_request=now - 1.0))
        interval = (now - timing.last_request) * 1000
        timing.interval_ms = 0.6 * timing.interval_ms + 0.4 * min(interval, 2000.0)
        timing.last_request = now

    async def complete(self, req: CompletionRequest, kind: str,
                       hard_budget_ms: float | None = None) -> Suggestion:
        """Answer a completion request; an empty text when superseded or cancelled.

        With ``hard_budget_ms`` the answer comes within that time, empty if nothing is ready.
        """
        start = time.perf_counter()
        self._note_request(req.uri)
        cached = self.service.cached(req)
        if cached is not None:
            self._supersede(req.uri, keep_background=True)
            cached.latency_ms = (time.perf_counter() - start) * 1000
            self.stats.record(kind, text=cached.text, cached=True, latency_ms=cached.latency_ms,
                              stats=None, outcome="ok")
            self._confirm_in_background(req, cached.text)
            return cached
        self._supersede(req.uri)
        loop = asyncio.get_running_loop()
        pending = _Pending(req.uri, loop.create_future())
        self._pending[req.uri] = pending
        outcome = "ok"
        try:
            delay = self.debounce_s(req.uri)
            if delay > 0:
                try:
                    await asyncio.wait_for(asyncio.shield(pending.answer), timeout=delay)
                except TimeoutError:
                    pass
            if not pending.answer.done():
                self._start(req, pending, loop)
            if hard_budget_ms is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(pending.answer),
                                           timeout=max(0.0, hard_budget_ms / 1000 - delay))
                except TimeoutError:  # answer empty now; the work goes on into the cache
                    _resolve(pending.answer, Suggestion("", stop_reason="time_box"))
            suggestion = await pending.answer
            if suggestion.stop_reason == "superseded":
                outcome = "superseded"
        except asyncio.CancelledError:
            self._cancel(pending)
            self.stats.record(kind, text="", cached=False,
                              latency_ms=(time.perf_counter() - start) * 1000,
                              stats=None, outcome="cancelled")
            raise
        finally:
            if self._pending.get(req.uri) is pending:
                del self._pending[req.uri]
        suggestion.latency_ms = (time.perf_counter() - start) * 1000
        if outcome == "ok" and suggestion.stop_reason != "cancelled":
            self._recent_latency_ms = 0.7 * self._recent_latency_ms + 0.3 * suggestion.latency_ms
        self.stats.record(kind, text=suggestion.text, cached=False,
                          latency_ms=suggestion.latency_ms, stats=suggestion.stats,
                          outcome=outcome if suggestion.stop_reason != "cancelled" else "cancelled")
        return suggestion

    def _start(self, req: CompletionRequest, pending: _Pending,
               loop: asyncio.AbstractEventLoop, hint: str = "") -> None:
        def answer(suggestion: Suggestion) -> None:
            loop.call_soon_threadsafe(_resolve, pending.answer, suggestion)

        def job() -> None:
            try:
                run_job()
            finally:
                with self._jobs_lock:
                    self._jobs -= 1

        def run_job() -> None:
            if pending.answer.done() or pending.token.is_set():
                return
            self._running = pending
            try:
                result = self.service.complete(req, answer_early=answer, hint=hint,
                                               cancelled=pending.token.is_set)
            except Exception:  # never leave a request unanswered
                log.exception("completion failed")
                result = Suggestion("", stop_reason="error")
            finally:
                self._running = None
            # Work whose answer went out before it finished (background, time box, superseded)
            # still counts in the engine totals.
            answered = pending.background or pending.answer.done()
            if result.stats is not None and (answered or result.extra.get("answered_early")):
                self.stats.record_background(result.stats)
            answer(result)

        with self._jobs_lock:
            self._jobs += 1
        try:
            future = loop.run_in_executor(self._worker, job)
        except RuntimeError:  # shut down
            with self._jobs_lock:
                self._jobs -= 1
            raise
        future.add_done_callback(lambda f: f.exception() and log.error("job: %s", f.exception()))

    def _supersede(self, uri: str, keep_background: bool = False) -> None:
        old = self._pending.get(uri)
        running = self._running
        if old is not None and not old.answer.done():
            old.token.set()
            _resolve(old.answer, Suggestion("", stop_reason="superseded"))
        # Work nobody waits for (a time-boxed rest, a background confirm) yields to any request,
        # except one served from the cache for the same document: that work feeds the cache.
        if running is not None and running.answer.done():
            if not (keep_background and running.uri == uri):
                running.token.set()

    def _cancel(self, pending: _Pending) -> None:
        pending.token.set()
        if not pending.answer.done():
            _resolve(pending.answer, Suggestion("", stop_reason="cancelled"))

    def forget(self, uri: str) -> None:
        """A document closed: answer its pending request and drop its timing."""
        self._supersede(uri)
        self._timing.pop(uri, None)

    def _confirm_in_background(self, req: CompletionRequest, remainder: str) -> None:
        """Let the engine confirm and extend a typed-through suggestion when it is idle."""
        if self._running is not None or not self.service.loaded:
            return
        loop = asyncio.get_running_loop()
        pending = _Pending(req.uri, loop.create_future(), background=True)
        self._start(req, pending, loop, hint=remainder)


def _resolve(future: asyncio.Future, value: Suggestion) -> None:
    if not future.done():
        future.set_result(value)
