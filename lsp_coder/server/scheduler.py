"""Debounce, supersede and cancel completion requests; one inference worker thread.

Every request gets an answer. A newer request for the same document supersedes an older one:
the older one is answered at once with an empty result and its decode is aborted. A request that
types along a shown suggestion is answered from the suggestion cache without waiting, and the
engine confirms and extends that suggestion in the background when it is idle.

Idle work comes last: after an answer the completion layer names the prompts the next keystroke
will probably need (Enter, accepting the suggestion, a file just opened); when no request is
pending or running and the user has paused for ``idle.start_after_ms``, the worker prefills them
one at a time. A request that arrives stops the running prefill within one ubatch.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from ..completion.next_prompts import HINTS, IN_VIEW, NextPrompt
from ..completion.service import CompletionRequest, CompletionService, Suggestion
from ..config import IdleConfig
from .stats import Stats

log = logging.getLogger(__name__)

PREFETCHES_KEPT = 2
"""Finished prefetches a request for exactly their state can still take (Enter's and the
accept branch's, which run one after the other)."""


@dataclass(slots=True)
class _DocTiming:
    last_request: float = 0.0
    interval_ms: float = 1000.0


@dataclass(slots=True)
class _Ahead:
    """A running idle job that will generate the suggestion for one document state (a
    prefetched branch). A request for exactly that state takes its answer instead of stopping
    it and starting over."""

    uri: str
    result: asyncio.Future
    """The prefetched Suggestion; None when the job generated none (its prefill stopped)."""
    text: str | None = None
    """The branch's document text and cursor, set once the worker has built them."""
    offset: int = -1
    early: Suggestion | None = None
    """The complete lines it had when the inline budget ran out, if that came first."""
    taker: _Pending | None = None

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
        return made is not None and made.stop_reason != "cancelled"

    def answer_early(self, suggestion: Suggestion) -> None:
        self.early = suggestion
        if self.taker is not None:
            _resolve(self.taker.answer, suggestion)


@dataclass(slots=True)
class _Pending:
    uri: str
    answer: asyncio.Future
    background: bool = False
    token: threading.Event = field(default_factory=threading.Event)


class Scheduler:
    """Owns the worker thread that owns the engine (through ``service``)."""

    def __init__(self, service: CompletionService, stats: Stats,
                 debounce_ms: Callable[[], float],
                 idle: Callable[[], IdleConfig] = IdleConfig) -> None:
        self.service = service
        self.stats = stats
        self._debounce_ceiling = debounce_ms
        self._idle_config = idle
        self._idle_queue: list[NextPrompt] = []
        self._idle_token: threading.Event | None = None  # set: the running idle job stops
        self._idle_stop_soon: threading.Event | None = None  # set: it stops after its chunk
        self._idle_job: NextPrompt | None = None
        self._ahead: _Ahead | None = None  # the running idle job, when it prefetches
        self._prefetched: deque[_Ahead] = deque(maxlen=PREFETCHES_KEPT)  # finished ones
        self._idle_timer: asyncio.TimerHandle | None = None
        self._preempted_at: int | None = None  # ubatch clock when a request stopped idle work
        self._last_activity = 0.0
        self._focus: str | None = None  # the document the user is in: last opened, hinted, asked
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lsp-coder-engine")
        self._pending: dict[str, _Pending] = {}
        self._running: _Pending | None = None
        self._timing: dict[str, _DocTiming] = {}
        self._recent_latency_ms = 1000.0
        self._jobs = 0
        self._jobs_lock = threading.Lock()
        self._loading: asyncio.Future | None = None  # done when the model (re)load ends

    # -- worker access --------------------------------------------------------------------------

    async def run(self, fn: Callable, *args):
        """Run ``fn(*args)`` on the worker thread (model loads, cache forgets, ...)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, fn, *args)

    def shutdown(self) -> None:
        self._idle_queue.clear()
        self._stop_idle()
        running = self._running
        if running is not None:
            running.token.set()
        self._worker.shutdown(wait=False, cancel_futures=True)

    def begin_loading(self) -> None:
        """From now until ``end_loading``, completion requests wait for the model instead of
        being answered empty (they are still superseded and cancelled as usual)."""
        if self._loading is None or self._loading.done():
            self._loading = asyncio.get_running_loop().create_future()
        self._prefetched.clear()  # made by the model being replaced

    def end_loading(self) -> None:
        if self._loading is not None and not self._loading.done():
            self._loading.set_result(None)
        self._loading = None

    @property
    def loading(self) -> bool:
        """Whether a model load (with its messages to the client) is still under way."""
        return self._loading is not None

    @property
    def idle_running(self) -> bool:
        """Whether an idle prefill is on the worker now."""
        return self._idle_token is not None

    @property
    def idle_queued(self) -> int:
        """Idle jobs waiting for their turn."""
        return len(self._idle_queue)

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
        been fast recently, since a wasted start then costs little. On a shared serving engine
        a wasted start costs everyone: always the full ceiling.
        """
        ceiling = self._debounce_ceiling()
        if ceiling > 0 and self.service.shared_engine:
            return ceiling / 1000  # a start that is then superseded costs a shared engine
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
        ahead = next((a for a in (self._ahead, *reversed(self._prefetched))
                      if a is not None and a.matches(req)), None)
        # A cursor job of this document is reading the prompt this request starts from: the
        # chunk it is on finishes (and stays cached) instead of being thrown away.
        running = self._idle_job
        finish_chunk = running is not None and running.kind == "cursor" and running.uri == req.uri
        # Only the running prefetch is kept; a finished one answers at once, and the idle job
        # running now (a guess at another key) stops as for any request.
        self._user_active(req.uri, keep_idle_job=ahead is not None and ahead is self._ahead,
                          finish_chunk=finish_chunk)
        cached = self.service.cached(req)
        if cached is not None:
            self._supersede(req.uri, keep_background=True)
            cached.latency_ms = (time.perf_counter() - start) * 1000
            self.stats.record(kind, text=cached.text, cached=True, latency_ms=cached.latency_ms,
                              stats=None, outcome="ok")
            self._confirm_in_background(req, cached.text)
            self._plan_idle(req, cached.text)
            return cached
        self._supersede(req.uri)
        loop = asyncio.get_running_loop()
        pending = _Pending(req.uri, loop.create_future())
        self._pending[req.uri] = pending
        outcome = "ok"
        delay = 0.0
        try:
            if ahead is not None:
                self._take_ahead(ahead, req, pending, loop)
            else:
                loading = self._loading
                if loading is not None:
                    await asyncio.wait((pending.answer, loading),
                                       return_when=asyncio.FIRST_COMPLETED)
                delay = self.debounce_s(req.uri)
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
                          outcome=outcome if suggestion.stop_reason != "cancelled" else "cancelled",
                          prefetch_taken=ahead is not None)
        if outcome == "ok" and suggestion.stop_reason not in ("cancelled", "error", "no_model"):
            self._plan_idle(req, suggestion.text)
        return suggestion

    def _take_ahead(self, ahead: _Ahead, req: CompletionRequest, pending: _Pending,
                    loop: asyncio.AbstractEventLoop) -> None:
        """Answer ``pending`` from the prefetch of its state, running or finished: its early
        lines if the budget ran out, then its suggestion; start the engine as usual if the
        prefetch ends without one (stopped by another request, or its prefill did not
        finish)."""
        ahead.taker = pending
        if ahead.early is not None:
            _resolve(pending.answer, ahead.early)

        def finished(result: asyncio.Future) -> None:
            suggestion = result.result()
            if pending.answer.done() or pending.token.is_set():
                return
            if suggestion is None or suggestion.stop_reason == "cancelled":
                self._start(req, pending, loop)
            else:
                _resolve(pending.answer, suggestion)

        ahead.result.add_done_callback(finished)

    def _start(self, req: CompletionRequest, pending: _Pending,
               loop: asyncio.AbstractEventLoop, hint: str = "",
               finish_idle_chunk: bool = False) -> None:
        def answer(suggestion: Suggestion) -> None:
            loop.call_soon_threadsafe(_resolve, pending.answer, suggestion)

        def job() -> None:
            try:
                run_job()
            finally:
                with self._jobs_lock:
                    self._jobs -= 1
                loop.call_soon_threadsafe(self._schedule_idle)

        def run_job() -> None:
            if pending.answer.done() or pending.token.is_set():
                return
            preempted_at, self._preempted_at = self._preempted_at, None
            if preempted_at is not None and not pending.background:
                self.stats.idle_preempted(self.service.ubatches_done() - preempted_at)
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
        self._stop_idle(finish_chunk=finish_idle_chunk)
        try:
            future = loop.run_in_executor(self._worker, job)
        except RuntimeError:  # shut down
            with self._jobs_lock:
                self._jobs -= 1
            raise
        future.add_done_callback(_log_failure)

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
        """A document closed: answer its pending request and drop its timing and idle work
        (a cursor job running for it plans no full prompt after it)."""
        self._supersede(uri)
        self._timing.pop(uri, None)
        if self._focus == uri:
            self._focus = None
        self._idle_queue = [n for n in self._idle_queue if n.uri != uri]
        for ahead in [a for a in self._prefetched if a.uri == uri]:
            self._prefetched.remove(ahead)

    # -- idle work ------------------------------------------------------------------------------

    def opened(self, uri: str, path: str, text: str) -> None:
        """A file was opened: prepare the prompt part its first request will share."""
        self._focus = uri
        config = self._idle_config()
        if not config.enabled or not config.window or not self.service.prefills:
            return
        window = self.service.opened(uri, path, text)
        self._idle_queue = [n for n in self._idle_queue if n.uri != uri] + [window]
        self._schedule_idle()

    def cursor_moved(self, uri: str, path: str, text: str, offset: int) -> None:
        """The client reported where the cursor rests (not a completion request): prepare the
        prompt a request there would read. It replaces the file's window, earlier cursor and
        full prompt (a running one after its chunk) and comes right after the Enter and accept
        branches of the file's last answer: idle work for other files (the one just left)
        waits, and if it is running it stops and goes on later from the chunks it finished.
        Work nobody waits for in another file (a background confirm, a time-boxed rest) stops
        too."""
        self._focus = uri
        config = self._idle_config()
        if not config.enabled or not self.service.prefills:
            return
        request = self._running
        if request is not None and request.answer.done() and request.uri != uri:
            request.token.set()
        queue = self._idle_queue
        running = self._idle_job
        if running is not None and (running.uri != uri or running.kind in HINTS):
            self._stop_idle(measure=False)
            if running.uri != uri:
                queue = [running] + queue
        elif running is not None and running.kind == "full":
            self._stop_idle(measure=False, finish_chunk=True)  # its chunks stay cached
        # The full prompt planned for the last answer's state is dropped: the cursor job plans
        # the full prompt at the cursor when it reads a short one (see ``_schedule_idle``).
        here = [n for n in queue if n.uri == uri and n.kind not in IN_VIEW]
        elsewhere = [n for n in queue if n.uri != uri]
        self._idle_queue = here + [self.service.cursor_at(uri, path, text, offset)] + elsewhere
        self._schedule_idle()

    def _user_active(self, uri: str, keep_idle_job: bool = False,
                     finish_chunk: bool = False) -> None:
        """A request came: idle work stops (unless it is generating exactly what the request
        asks for) and its plan is stale (other files' windows and cursors stay)."""
        self._last_activity = time.monotonic()
        self._focus = uri
        self._idle_queue = [n for n in self._idle_queue
                            if n.kind == "window" or (n.kind == "cursor" and n.uri != uri)]
        if not keep_idle_job:
            self._stop_idle(finish_chunk=finish_chunk)

    def _plan_idle(self, req: CompletionRequest, shown: str) -> None:
        """After an answer: its branches come first; a window or cursor being prefilled
        yields to them."""
        if not self._idle_config().enabled or not self.service.prefills:
            return
        self._last_activity = time.monotonic()
        branches = self.service.next_prompts(req, shown)
        windows = [n for n in self._idle_queue if n.kind in HINTS and n.uri != req.uri]
        running = self._idle_job
        if branches and running is not None and running.kind in HINTS:
            self._stop_idle(measure=False)
            if running.uri != req.uri:
                windows.append(running)  # it goes on from the chunks it finished
        self._idle_queue = branches + windows
        self._schedule_idle()

    def _stop_idle(self, measure: bool = True, finish_chunk: bool = False) -> None:
        """Stop the running idle job within its ubatch, or with ``finish_chunk`` after it."""
        token, soon = self._idle_token, self._idle_stop_soon
        if token is None or token.is_set():
            return
        if finish_chunk and soon is not None:
            if soon.is_set():
                return
            soon.set()
        else:
            token.set()
        if measure:
            self._preempted_at = self.service.ubatches_done()

    def _schedule_idle(self) -> None:
        """Start the next idle job once the worker is free and the user has paused."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        config = self._idle_config()
        if not config.enabled:
            self._idle_queue.clear()
            return
        if not self._idle_queue or self._idle_token is not None or self.busy or self._pending:
            return
        loop = asyncio.get_running_loop()
        wait = self._last_activity + config.start_after_ms / 1000 - time.monotonic()
        if wait > 0:
            self._idle_timer = loop.call_later(wait, self._schedule_idle)
            return
        nxt = self._idle_queue.pop(0)
        token, soon = threading.Event(), threading.Event()
        self._idle_token, self._idle_stop_soon = token, soon
        self._idle_job = nxt
        self._preempted_at = None

        # A window, cursor or full prompt of the document the user is in now may take another
        # document's room in the cache, and other idle work must leave it alone; those of
        # files opened or left before it may not.
        in_view = nxt.kind in IN_VIEW and nxt.uri == self._focus
        prefetch = config.prefetch and nxt.kind in ("enter", "accept")
        taken = prefetch and config.take_prefetch
        ahead = _Ahead(nxt.uri, loop.create_future()) if taken else None
        self._ahead = ahead

        def publish(text: str, offset: int) -> None:
            assert ahead is not None
            ahead.text, ahead.offset = text, offset

        def early(suggestion: Suggestion) -> None:
            assert ahead is not None
            loop.call_soon_threadsafe(ahead.answer_early, suggestion)

        # A cursor whose prompt is the short one for a cold cache: the full prompt comes next,
        # so a user who reads the file before typing gets answers from it.
        read_short = False

        def job() -> None:
            nonlocal read_short
            made = None
            try:
                state = nxt.state()
                if ahead is not None:
                    loop.call_soon_threadsafe(publish, *state)
                result = self.service.prefill(nxt, state, token.is_set, soon.is_set, in_view)
                ready = result is not None and result.outcome in ("done", "cached")
                read_short = ready and nxt.kind == "cursor" and result.short_prompt
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
                    loop.call_soon_threadsafe(_resolve, ahead.result, made)

        def done(_future) -> None:
            if self._idle_token is token:
                self._idle_token = self._idle_stop_soon = None
                self._idle_job = None
            if read_short and not token.is_set() and self._focus == nxt.uri:
                self._idle_queue.insert(0, self.service.full_at(nxt))
            if self._ahead is ahead:
                self._ahead = None
            if ahead is not None:
                self._prefetched.append(ahead)
            self._schedule_idle()

        try:
            future = loop.run_in_executor(self._worker, job)
        except RuntimeError:  # shut down
            self._idle_token = self._idle_stop_soon = None
            self._idle_job = None
            self._ahead = None
            return
        future.add_done_callback(done)

    def _confirm_in_background(self, req: CompletionRequest, remainder: str) -> None:
        """Let the engine confirm and extend a typed-through suggestion when it is idle.

        Not on a shared serving engine: there it would be a request per key typed through.
        """
        if self._running is not None or not self.service.loaded or self.service.shared_engine:
            return
        loop = asyncio.get_running_loop()
        pending = _Pending(req.uri, loop.create_future(), background=True)
        self._start(req, pending, loop, hint=remainder)


def _log_failure(future: asyncio.Future) -> None:
    """A worker job's done callback: log an exception (a job cancelled at shutdown is not one)."""
    if not future.cancelled() and future.exception() is not None:
        log.error("job: %s", future.exception())


def _resolve(future: asyncio.Future, value: Suggestion | None) -> None:
    if not future.done():
        future.set_result(value)
