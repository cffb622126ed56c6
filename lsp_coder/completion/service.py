"""What to complete: cache, context, prompt, backend call, postprocessing. No pygls here.

Threads: ``load``, ``close`` and ``complete`` run on the one inference worker thread (they use
the backend). ``cached``, ``forget``, ``reconfigure`` and ``snapshot`` run on the event loop and
touch the backend not at all (``reconfigure``) or only to read counters (``snapshot``): new
settings are taken by the worker at the start of its next request. The backend's lifecycle
(opening, swapping, the user-facing load errors) is ``lifecycle.BackendLifecycle``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from ..backends.base import Backend
from ..backends.health import Notify
from ..config import Config
from ..load_progress import LoadProgress, Stage
from ..model_files import load_plan
from ..shared_types import FimQuery, PrefillResult, PromptParts, RequestStats, StopReason
from .context import split_document, wants_multiline
from .lifecycle import BackendLifecycle
from .next_prompts import NextPrompt, after_answer, document_window
from .postprocess import POST_CACHE, PRE_CACHE, FilterContext, run
from .related import RelatedContext
from .related.text import uri_to_path
from .remote_prompt import fit_parts
from .suggestions import SuggestionCache

__all__ = ["CompletionRequest", "CompletionService", "RequestStats", "Suggestion"]

log = logging.getLogger(__name__)

NOT_STORED = (StopReason.CANCELLED, StopReason.BACKEND_ERROR, StopReason.BACKEND_DOWN)
"""Stop reasons whose text does not go into the suggestion cache."""

FILTER_WINDOW_CHARS = 16_384
"""Postprocessing sees whole lines reaching this far before and after the cursor."""

ALTERNATIVE_TEMPERATURE = 0.8
"""Alternatives are sampled at this temperature (or the configured one, if higher)."""


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """A completion at ``offset`` (a str index) of ``text``."""

    uri: str
    """The document."""
    text: str
    """The document's whole text."""
    offset: int
    """The cursor, a str index into ``text``."""
    path: str = ""
    """The document's file path (named in other files' context); the URI when empty."""
    language_id: str = ""
    """The editor's language id."""
    budget_ms: float | None = None
    """How long the caller waits: when it runs out the complete lines so far (or the partial
    first line) are answered and generation goes on into the suggestion cache."""
    alternatives: int = 0
    """Other suggestions to sample after the first (a request the user invoked)."""


@dataclass(slots=True)
class Suggestion:
    """What to show, and what it took."""

    text: str
    """The suggestion (empty: nothing to show)."""
    cached: bool = False
    """Answered from the suggestion cache."""
    stats: RequestStats | None = None
    """What the backend did for it (None when it did nothing)."""
    latency_ms: float = 0.0
    """From the start of the work to the answer."""
    stop_reason: str = ""
    """Why it ended (a ``StopReason`` value; empty for a cache answer)."""
    extra: dict = field(default_factory=dict)
    """Flags for the scheduler: ``answered_early`` (a time-boxed answer was sent);
    ``alternatives_evaluated_tokens`` (prompt tokens the alternatives evaluated)."""
    alternatives: list[str] = field(default_factory=list)
    """Other suggestions for the same cursor, distinct from ``text`` and each other."""


class CompletionService:
    """Turns documents and cursors into suggestions using one backend.

    It owns the settings: ``config`` is replaced only by ``reconfigure``.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.lifecycle = BackendLifecycle(lambda: self.config)
        """The backend and its last load error."""
        self.suggestions = SuggestionCache()
        self.related = RelatedContext()
        """Other files' code for the prompt: open documents, the workspace, definitions."""
        self._cold: set[str] = set()
        """Documents whose last request was answered from the short prompt for a cold cache
        (idle work then fills their full prompt)."""

    @property
    def backend(self) -> Backend | None:
        """The backend serving completions (None until a load succeeded)."""
        return self.lifecycle.backend

    @property
    def error(self) -> str | None:
        """The last load's error message for the user (None after a load succeeded)."""
        return self.lifecycle.error

    @property
    def notify(self) -> Notify | None:
        return self.lifecycle.notify

    @notify.setter
    def notify(self, notify: Notify | None) -> None:
        """Where a serving engine's one-per-outage messages go (the server sets it)."""
        self.lifecycle.notify = notify

    @property
    def shared_engine(self) -> bool:
        """Whether completions come from a serving engine other editors share."""
        backend = self.backend
        return backend is not None and backend.shared

    # -- backend lifecycle (worker thread) ------------------------------------------------------

    def load_plan(self) -> list[Stage]:
        """The stages ``load`` will go through (none for a serving engine), for a
        ``LoadProgress``."""
        return load_plan(self.config) if self.config.backend.kind == "local" else []

    def load(self, progress: LoadProgress | None = None) -> str | None:
        """Open the backend from the config; returns an error message on failure (see
        ``BackendLifecycle.load``). ``progress`` hears every stage of ``load_plan``."""
        return self.lifecycle.load(progress)

    def close(self) -> None:
        self.lifecycle.close()

    @property
    def loaded(self) -> bool:
        """Whether a model is loaded (or a serving engine configured)."""
        return self.backend is not None

    def describe(self) -> dict[str, Any]:
        """The backend's figures and warnings (``Backend.describe``); {} without one."""
        return self.lifecycle.describe()

    # -- settings and documents (event loop) ----------------------------------------------------

    def reconfigure(self, config: Config) -> bool:
        """Take new settings; returns True when the model must be reloaded (call ``load``).

        Settings that need no reload reach the engine at the start of the next request, on the
        worker thread, never during a decode.
        """
        old = self.config
        self.config = config
        return config.model != old.model or config.cache != old.cache or (
            config.speculative.draft_model != old.speculative.draft_model) or (
            config.backend != old.backend)

    def forget(self, uri: str) -> None:
        """A document closed: drop its suggestions, its place in the extra context and the
        start of its short window."""
        self.suggestions.forget(uri)
        self.related.closed(uri)
        self._cold.discard(uri)
        backend = self.backend
        if backend is not None:
            backend.forget(uri)

    # -- other files (event loop): one call per LSP event, recorded by the related context ---

    def workspace_folders(self, folders: list[str]) -> None:
        """The client's workspace folders (URIs); the index is built in the background."""
        self.related.set_roots(folders, self.config)

    def document_opened(self, uri: str, text: str) -> None:
        """A document opened: its code may be shown in other documents' prompts."""
        self.related.opened(uri, text)

    def document_saved(self, uri: str, text: str | None) -> None:
        """A document saved (``text``: its content, when known)."""
        self.related.saved(uri, text)

    def files_changed(self, uris: list[str]) -> None:
        """Files created, changed or deleted on disk (``workspace/didChangeWatchedFiles``)."""
        paths = [p for p in map(uri_to_path, uris) if p is not None]
        self.related.files_changed(paths)

    def snapshot(self) -> dict[str, Any]:
        """Whether a backend is ready, the load error, the backend and its cache memory (see
        ``BackendLifecycle.snapshot``), and with a workspace being indexed ``workspace_index``
        (``related.workspace.IndexStats``)."""
        out = self.lifecycle.snapshot()
        index = self.related.index
        if index is not None:
            out["workspace_index"] = asdict(index.stats())
        return out

    def status(self) -> dict[str, Any]:
        """Whether suggestions can come, for an editor's status display (event loop, cheap).

        ``state``: "ready"; "error" (no model or no backend; ``message`` says why);
        "unreachable" (the serving engine does not answer; ``message`` names its URL and the
        fix). ``backend``: the backend's kind; ``url``: a serving engine's address.
        """
        out = {"state": "ready", "message": self.error or "", "backend": self.config.backend.kind,
               "url": ""}
        backend = self.backend
        if backend is None:
            out.update(state="error", message=self.error or "no model loaded")
            return out
        shown = backend.status()
        out["url"] = shown.get("url") or ""
        health = shown.get("health") or {}
        if health.get("up") is False:
            out.update(state="unreachable", message=health.get("error")
                       or f"the completion engine at {out['url']} does not answer")
        return out

    # -- completion -----------------------------------------------------------------------------

    def cached(self, req: CompletionRequest) -> Suggestion | None:
        """Answer from the suggestion cache if the user typed along a shown suggestion."""
        hit = self.suggestions.lookup(req.uri, req.text, req.offset,
                                      _rest_of_line(req.text, req.offset))
        if hit is None:
            return None
        prefix, suffix = _filter_window(req.text, req.offset)
        parts = PromptParts((), "", prefix[prefix.rfind("\n") + 1 :], suffix)
        ctx = FilterContext(prefix=prefix, suffix=suffix, multiline=wants_multiline(parts))
        text = run(POST_CACHE, hit.remainder, ctx)
        return Suggestion(text, cached=True) if text else None

    def complete(self, req: CompletionRequest,
                 answer_early: Callable[[Suggestion], None] | None = None,
                 hint: str = "", cancelled: Callable[[], bool] = lambda: False,
                 idle: bool = False) -> Suggestion:
        """Generate a suggestion for ``req`` (worker thread).

        Args:
            req: the document and cursor.
            answer_early: called at most once with a time-boxed answer (complete lines so far)
                when ``req.budget_ms`` runs out; generation then goes on into the cache.
            hint: the not-yet-typed rest of a previous suggestion, drafted for free.
            cancelled: polled between decode steps and ubatches; True stops the work.
            idle: a prefetch for a likely next state: the visit is not recorded and the
                engine works on a branch of its cache (lowest retention).

        Returns:
            The full (postprocessed) suggestion; empty when there is no model or nothing to say.
        """
        start = time.perf_counter()
        backend = self.backend
        if backend is None:
            return Suggestion("", stop_reason=StopReason.NO_MODEL)
        cc = self.config.completion
        parts, budgets = self._parts(backend, req, preview=idle)
        multiline = wants_multiline(replace(parts, recent=""))
        prefix, suffix = _filter_window(req.text, req.offset)
        ctx = FilterContext(prefix=prefix, suffix=suffix, multiline=multiline)
        early = _EarlyAnswer(answer_early, req.budget_ms, start, ctx)
        query = self._query(
            req, parts, budgets,
            stop=_line_limit(cc.max_lines) if multiline else _first_line,
            budget_ms=req.budget_ms,
            cancelled=cancelled,
            on_text=early.on_text if answer_early is not None else None,
            hint=hint,
            corpus=self.suggestions.latest(req.uri),
            idle=idle)
        result = backend.complete(query)
        if not idle and result.stats is not None and result.stop_reason != StopReason.CANCELLED:
            if result.stats.short_prompt:
                self._cold.add(req.uri)
            else:
                self._cold.discard(req.uri)
        raw = run(PRE_CACHE, result.text, ctx)
        text = run(POST_CACHE, raw, ctx)
        if result.stop_reason not in NOT_STORED and text:
            self.suggestions.store(req.uri, req.text[: req.offset],
                                   _rest_of_line(req.text, req.offset), text)
        extra: dict[str, Any] = {"answered_early": early.sent}
        alternatives: list[str] = []
        if req.alternatives and not idle and not early.sent and (
                result.stop_reason not in NOT_STORED):
            alternatives = self._alternatives(backend, query, ctx, req, start, text, extra)
        return Suggestion(text, stats=result.stats, stop_reason=result.stop_reason,
                          latency_ms=(time.perf_counter() - start) * 1000,
                          extra=extra, alternatives=alternatives)

    def _alternatives(self, backend: Backend, query: FimQuery, ctx: FilterContext,
                      req: CompletionRequest, start: float, first: str,
                      extra: dict[str, Any]) -> list[str]:
        """Up to ``req.alternatives`` other suggestions, sampled with distinct seeds from the
        prompt the first one left cached; stops when cancelled or past the request's budget.

        ``extra["alternatives_evaluated_tokens"]`` gets the prompt tokens they evaluated (few,
        when the engine kept the prompt)."""
        temperature = max(self.config.completion.temperature, ALTERNATIVE_TEMPERATURE)
        seen = {first}
        found: list[str] = []
        extra["alternatives_evaluated_tokens"] = 0
        for n in range(1, req.alternatives + 1):
            over_budget = req.budget_ms is not None and (
                time.perf_counter() - start) * 1000 >= req.budget_ms
            if query.cancelled() or over_budget:
                break
            result = backend.complete(replace(query, temperature=temperature,
                                              seed=(query.seed + n) % 2**32, hint="",
                                              on_text=None))
            if result.stop_reason in NOT_STORED:
                break
            if result.stats is not None:
                extra["alternatives_evaluated_tokens"] += result.stats.evaluated_tokens
            text = run(POST_CACHE, run(PRE_CACHE, result.text, ctx), ctx)
            if text and text not in seen:
                seen.add(text)
                found.append(text)
        return found

    def _parts(self, backend: Backend, req: CompletionRequest,
               preview: bool = False) -> tuple[PromptParts, tuple[int, int, int]]:
        """The text pieces for ``req`` within the token budgets, and those (prefix, suffix,
        extra) budgets; ``preview`` builds them without recording the visit in the
        other-files context."""
        cc = self.config.completion
        prefix_tokens, suffix_tokens, extra_tokens = backend.budgets(
            cc.prefix_tokens, cc.suffix_tokens, self.config.context.budget_tokens, cc.max_tokens)
        parts = split_document(req.text, req.offset, prefix_tokens=prefix_tokens,
                               suffix_tokens=suffix_tokens, recent_lines=cc.recent_lines)
        section = self.related.section(req.uri, req.text, req.offset, extra_tokens,
                                       self.config, record=not preview)
        parts = replace(parts, extra=section.entries, repo=section.repo, path=section.path)
        if backend.kind != "local":  # the local engine holds its token prompt to the budgets
            parts = fit_parts(parts, backend.count_tokens, prefix_tokens=prefix_tokens,
                              suffix_tokens=suffix_tokens, extra_tokens=extra_tokens)
        return parts, (prefix_tokens, suffix_tokens, extra_tokens)

    def _query(self, req: CompletionRequest, parts: PromptParts,
               budgets: tuple[int, int, int], **how: Any) -> FimQuery:
        """The one query for ``parts``: the settings' sampling, and ``how`` (the request's
        stop rule, callbacks and drafts; see ``FimQuery``)."""
        cc = self.config.completion
        prefix_tokens, suffix_tokens, extra_tokens = budgets
        return FimQuery(uri=req.uri, above=parts.above, line_prefix=parts.line_prefix,
                        suffix=parts.suffix, extra=parts.extra, recent=parts.recent,
                        repo=parts.repo, path=parts.path,
                        prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens,
                        extra_tokens=extra_tokens, max_tokens=cc.max_tokens,
                        temperature=cc.temperature, seed=cc.seed, **how)

    # -- idle work ------------------------------------------------------------------------------

    @property
    def prefills(self) -> bool:
        """Whether idle prefill runs: on the local engine, and on a serving engine that can
        take a prefill-only request when ``idle.remote`` allows it."""
        backend = self.backend
        if backend is None or not backend.can_prefill:
            return False
        return backend.kind == "local" or self.config.idle.remote

    def next_prompts(self, req: CompletionRequest, shown: str) -> list[NextPrompt]:
        """What to prepare after ``shown`` was answered for ``req`` (any thread)."""
        return after_answer(req.uri, req.path or req.uri, req.text, req.offset, shown,
                            cold=req.uri in self._cold)

    def opened(self, uri: str, path: str, text: str) -> NextPrompt:
        """What to prepare for a file just opened (any thread)."""
        return document_window(uri, path, text, self.config.completion.prefix_tokens)

    def cursor_at(self, uri: str, path: str, text: str, offset: int) -> NextPrompt:
        """What to prepare for a cursor the client reported without asking to complete."""
        return NextPrompt("cursor", uri, path, text, offset)

    def full_at(self, nxt: NextPrompt) -> NextPrompt:
        """The full prompt at the state of ``nxt`` (whose prompt was the short one)."""
        return NextPrompt("full", nxt.uri, nxt.path, nxt.base, nxt.offset)

    def prefill(self, nxt: NextPrompt, state: tuple[str, int], cancelled: Callable[[], bool],
                stop: Callable[[], bool] = lambda: False,
                in_view: bool = False) -> PrefillResult | None:
        """Make the backend hold the prompt of ``nxt`` (worker thread; idle priority).

        ``state`` is ``nxt.state()`` (a copy of the document: the caller builds it once). A
        ``window`` holds only the prompt's part before the text below the cursor, a ``full``
        the full prompt; the other kinds the prompt a request for the state would read now
        (the short one for a cold cache, see ``idle.cold_prompt_ms``). ``in_view``: the
        document the user is in now (see ``Backend.prefill``). Stops within one ubatch once
        ``cancelled`` is true, after the running chunk once ``stop`` is. None when there is
        no model or the backend cannot prefill.
        """
        backend = self.backend
        if backend is None:
            return None
        text, offset = state
        req = CompletionRequest(uri=nxt.uri, text=text, offset=offset, path=nxt.path)
        parts, budgets = self._parts(backend, req, preview=True)
        query = self._query(req, parts, budgets, cancelled=cancelled, stop_between_chunks=stop)
        part = {"window": "shared", "full": "full"}.get(nxt.kind, "request")
        return backend.prefill(query, part, in_view)

    def prefetch(self, nxt: NextPrompt, state: tuple[str, int], cancelled: Callable[[], bool],
                 answer_early: Callable[[Suggestion], None] | None = None) -> Suggestion:
        """Generate the suggestion for ``nxt`` (at ``state``, its ``nxt.state()``) into the
        suggestion cache (idle priority).

        ``answer_early`` gets the complete lines so far once the inline budget has run out,
        for a request that is waiting on this very state.
        """
        text, offset = state
        req = CompletionRequest(uri=nxt.uri, text=text, offset=offset, path=nxt.path,
                                budget_ms=self.config.completion.inline_budget_ms or None)
        return self.complete(req, answer_early=answer_early, cancelled=cancelled, idle=True)

    def ubatches_done(self) -> int:
        """A clock of engine work: ubatches evaluated so far (any thread; 0 without a model)."""
        backend = self.backend
        return 0 if backend is None else backend.ubatches_done()


class _EarlyAnswer:
    """Sends the complete lines so far once the budget has run out (at most once)."""

    def __init__(self, send: Callable[[Suggestion], None] | None, budget_ms: float | None,
                 start: float, ctx: FilterContext) -> None:
        self.send = send
        self.deadline = None if budget_ms is None else start + budget_ms / 1000
        self.start = start
        self.ctx = ctx
        self.sent = False

    def on_text(self, text: str) -> None:
        if self.sent or self.send is None or self.deadline is None:
            return
        if time.perf_counter() < self.deadline:
            return
        cut = text.rfind("\n")
        if cut <= 0 or not text[:cut].strip():
            return  # the first line is not complete yet
        complete = text[:cut]
        answer = run(POST_CACHE, run(PRE_CACHE, complete, self.ctx), self.ctx)
        if not answer:
            return
        self.sent = True
        self.send(Suggestion(answer, latency_ms=(time.perf_counter() - self.start) * 1000,
                             stop_reason=StopReason.TIME_BOX))


def _first_line(text: str) -> int | None:
    """Single-line mode shows only the text before the first newline (see ``limit_scope``):
    stop there. At the end of a finished line the model's answer is often a newline and the
    next line, which would be generated only to be dropped."""
    cut = text.find("\n")
    return None if cut < 0 else cut


def _line_limit(max_lines: int) -> Callable[[str], int | None]:
    """Stop after ``max_lines`` lines with content (a leading newline does not count)."""

    def stop(text: str) -> int | None:
        lines = 0
        pos = 0
        body_started = False
        while True:
            nl = text.find("\n", pos)
            if nl < 0:
                return None
            if text[pos:nl].strip() or body_started:
                body_started = True
                lines += 1
                if lines >= max_lines:
                    return nl
            pos = nl + 1

    return stop


def _rest_of_line(text: str, offset: int) -> str:
    """The cursor line after the cursor, at most ``FILTER_WINDOW_CHARS`` of it (a suggestion
    is shown again only where this is the same)."""
    end = text.find("\n", offset, offset + FILTER_WINDOW_CHARS)
    return text[offset : min(len(text), offset + FILTER_WINDOW_CHARS) if end < 0 else end]


def _filter_window(text: str, offset: int) -> tuple[str, str]:
    """The text before and after the cursor that postprocessing reads: whole lines, about
    ``FILTER_WINDOW_CHARS`` each way (at most twice that: a line longer than that is cut). A
    filter compares a suggestion only with the lines next to it, and copying or splitting all
    of a 5 MB document (or of a line of a million characters) would block for tens of ms."""
    reach = 2 * FILTER_WINDOW_CHARS
    start = 0
    if offset > FILTER_WINDOW_CHARS:
        start = text.rfind("\n", max(0, offset - reach), offset - FILTER_WINDOW_CHARS) + 1
        start = start or max(0, offset - reach)
    end = text.find("\n", offset + FILTER_WINDOW_CHARS, offset + reach)
    end = min(len(text), offset + reach) if end < 0 else end
    return text[start:offset], text[offset:end]
