"""What to complete: cache, context, prompt, backend call, postprocessing. No pygls here.

Threads: ``load``, ``close`` and ``complete`` run on the one inference worker thread (they use
the backend). ``cached``, ``forget``, ``reconfigure`` and ``snapshot`` run on the event loop and
touch the backend not at all (``reconfigure``) or only to read counters (``snapshot``): new
settings are taken by the worker at the start of its next request. The backend's lifecycle
(opening, swapping, the user-facing load errors) is ``lifecycle.BackendLifecycle``; its
document events are ``document_events.DocumentEvents``, its idle work ``idle_work.IdleWork``,
its ``snapshot`` and ``status`` ``reports.Reports``.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from ..backends.base import Backend
from ..backends.health import Notify
from ..config import Config, model_key
from ..load_progress import LoadProgress, Stage
from ..model_files import load_plan
from ..shared_types import FimQuery, RequestStats, StopReason
from .alternatives import sample_alternatives
from .answer_rules import EarlyAnswer, line_limit, one_statement, unsure
from .context import cursor_parts, wants_multiline
from .document_events import DocumentEvents
from .filter_window import filter_window, rest_of_line
from .idle_work import IdleWork
from .lifecycle import BackendLifecycle
from .postprocess import POST_CACHE, PRE_CACHE, FilterContext, run
from .prompt_sources import DocumentSources, settings_budget
from .recent_edits import RecentEdits
from .records import CompletionRequest, Suggestion
from .related import RelatedContext
from .related.index_pool import IndexPool
from .related.text import uri_to_path
from .reports import Reports
from .second_pass import answer_again
from .suggestions import NOT_STORED, SuggestionCache

__all__ = ["CompletionRequest", "CompletionService", "IndexPool", "RequestStats", "Suggestion"]

log = logging.getLogger(__name__)


class CompletionService(DocumentEvents, IdleWork, Reports):
    """Turns documents and cursors into suggestions using one backend.

    It owns the settings: ``config`` is replaced only by ``reconfigure``. ``indexes``: the
    server's workspace indexes, shared by its sessions (default: the service's own).
    """

    def __init__(self, config: Config, lifecycle: BackendLifecycle | None = None,
                 indexes: IndexPool | None = None) -> None:
        self.config = config
        self.lifecycle = lifecycle if lifecycle is not None else BackendLifecycle()
        """The backend and its last load error (shared by the editor sessions of a server)."""
        self.suggestions = SuggestionCache()
        self.related = RelatedContext(indexes)
        """Other files' code for the prompt: open documents, the workspace, definitions."""
        self.edits = RecentEdits()
        """The user's last finished edits, shown after the other files' section."""
        self._cold: set[str] = set()
        """Documents whose last request was answered from the short prompt for a cold cache
        (idle work then fills their full prompt)."""
        self._excluded: tuple[str, str] | None = None
        """(document, why) when the last request was for a document excluded from the model
        (the status says so until a request for another document)."""

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

    def load(self, progress: LoadProgress | None = None,
             lifecycle: BackendLifecycle | None = None, fallback: bool = False) -> str | None:
        """Open the backend from the config into ``lifecycle`` (default: the service's own);
        returns an error message on failure (see ``BackendLifecycle.load``). ``progress``
        hears every stage of ``load_plan``; ``fallback``: another model keeps serving if this
        one fails."""
        lifecycle = self.lifecycle if lifecycle is None else lifecycle
        lifecycle.use(self.config)
        return lifecycle.load(progress, fallback=fallback)

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
        return model_key(config) != model_key(old)

    def end(self) -> None:
        """The editor session ended: its workspace index stops (the backend stays: other
        sessions may share it)."""
        self.related.close()
        self.edits.clear()

    def forget(self, uri: str) -> None:
        """A document closed: drop its suggestions, its place in the extra context and the
        start of its short window."""
        self.suggestions.forget(uri)
        self.related.closed(uri)
        self.edits.closed(uri)
        self._cold.discard(uri)
        backend = self.backend
        if backend is not None:
            backend.forget(uri)

    # -- completion -----------------------------------------------------------------------------

    def cached(self, req: CompletionRequest) -> Suggestion | None:
        """Answer from the suggestion cache if the user typed along a shown suggestion."""
        hit = self.suggestions.lookup(req.uri, req.text, req.offset,
                                      rest_of_line(req.text, req.offset))
        if hit is None:
            return None
        prefix, suffix = filter_window(req.text, req.offset)
        ctx = FilterContext(prefix=prefix, suffix=suffix,
                            multiline=wants_multiline(cursor_parts(prefix, suffix)))
        text = run(POST_CACHE, hit.remainder, ctx)
        return Suggestion(text, cached=True) if text else None

    def complete(self, req: CompletionRequest,
                 answer_early: Callable[[Suggestion], None] | None = None,
                 hint: str = "", cancelled: Callable[[], bool] = lambda: False,
                 idle: bool = False,
                 yielding: Callable[[], bool] = lambda: False) -> Suggestion:
        """Generate a suggestion for ``req`` (worker thread).

        Args:
            req: the document and cursor.
            answer_early: called at most once with a time-boxed answer (complete lines so far)
                when ``req.budget_ms`` runs out; generation then goes on into the cache.
            hint: the not-yet-typed rest of a previous suggestion, drafted for free.
            cancelled: polled between decode steps and ubatches; True stops the work.
            yielding: True stops the work once its prompt is read (a read under way goes on
                and stays cached), and at once after that.
            idle: a prefetch for a likely next state: the visit is not recorded and the
                engine works on a branch of its cache (lowest retention).

        Returns:
            The full (postprocessed) suggestion; empty when there is no model or nothing to say.
        """
        start = time.perf_counter()
        backend = self.backend
        if backend is None:
            return Suggestion("", stop_reason=StopReason.NO_MODEL)
        if self._refused(req.uri, record=not idle):
            return Suggestion("", stop_reason=StopReason.EXCLUDED)
        self.lifecycle.use(self.config)
        cc = self.config.completion
        prefix, suffix = filter_window(req.text, req.offset)
        multiline = wants_multiline(cursor_parts(prefix, suffix))
        mend = self.related.import_path_mender(req.uri, prefix[prefix.rfind("\n") + 1 :],
                                               self.config)
        ctx = FilterContext(prefix=prefix, suffix=suffix, multiline=multiline,
                            mend_import_path=mend)
        early = EarlyAnswer(answer_early, req.budget_ms, start, ctx)
        query = self._query(
            req, preview=idle,
            stop=line_limit(cc.max_lines) if multiline else one_statement(ctx, cc.max_lines),
            budget_ms=req.budget_ms,
            cancelled=cancelled,
            stop_between_chunks=yielding,
            on_text=early.on_text if answer_early is not None else None,
            hint=hint,
            corpus=self.suggestions.latest(req.uri),
            idle=idle)
        result = backend.complete(query)
        if (self.config.context.second_pass and not idle and not early.sent
                and result.stop_reason not in NOT_STORED and not early.over_budget()):
            again = answer_again(backend, query, result, run(PRE_CACHE, result.text, ctx), req,
                                 self.config, self.related, self.edits)
            if again is not None and again[0].stop_reason not in NOT_STORED:
                result, query = again  # alternatives sample the prompt it left cached
        if not idle and result.stats is not None and result.stop_reason != StopReason.CANCELLED:
            if result.stats.short_prompt:
                self._cold.add(req.uri)
            else:
                self._cold.discard(req.uri)
            if not result.stats.held_section:
                self.related.shown(req.uri)
        raw = run(PRE_CACHE, result.text, ctx)
        text = run(POST_CACHE, raw, ctx)
        extra: dict[str, Any] = {"answered_early": early.sent}
        if text and not req.invoked and unsure(result.stats, cc.min_confidence):
            text, extra["unsure"] = "", True
        if result.stop_reason not in NOT_STORED and text:
            self.suggestions.store(req.uri, req.text[: req.offset],
                                   rest_of_line(req.text, req.offset), text)
        alternatives: list[str] = []
        if req.alternatives and not idle and not early.sent and (
                result.stop_reason not in NOT_STORED):
            alternatives = sample_alternatives(backend, query, ctx, req, start, text, extra,
                                               self.config.completion.temperature)
        return Suggestion(text, stats=result.stats, stop_reason=result.stop_reason,
                          latency_ms=(time.perf_counter() - start) * 1000,
                          extra=extra, alternatives=alternatives)

    def _refused(self, uri: str, record: bool) -> bool:
        """Whether the document ``uri`` is excluded from the model (its own text would be the
        prompt); ``record``: the status tells (a request the user made)."""
        why = self.related.excluded(uri, self.config)
        if record:
            path = uri_to_path(uri)
            self._excluded = None if why is None else (
                path.name if path is not None else uri, why)
        return why is not None

    def _query(self, req: CompletionRequest, preview: bool = False, **how: Any) -> FimQuery:
        """The one query for ``req``: its prompt's sources (gathered and fitted by the backend,
        for its budget), the settings' budgets and sampling, and ``how`` (the request's stop
        rule, callbacks and drafts; see ``FimQuery``). ``preview``: the visit is not recorded
        in the other-files context."""
        cc = self.config.completion
        sources = DocumentSources(req, self.config, self.related, record=not preview,
                                  edits=self.edits)
        return FimQuery(uri=req.uri, sources=sources, budget=settings_budget(self.config),
                        max_tokens=cc.max_tokens, temperature=cc.temperature, seed=cc.seed,
                        **how)

