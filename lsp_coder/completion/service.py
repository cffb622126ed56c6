"""What to complete: cache, context, prompt, engine call, postprocessing. No pygls here.

Threads: ``load``, ``close`` and ``complete`` run on the one inference worker thread (they use
the engine). ``cached``, ``forget``, ``reconfigure`` and ``snapshot`` run on the event loop and
touch the engine not at all (``reconfigure``) or only to read counters (``snapshot``): new
engine settings are taken by the worker at the start of its next request.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..config import Config
from ..engine.engine import Engine
from ..engine.generator import GenerateRequest, RequestStats
from ..engine.llama import ModelLoadError
from ..model_files import ModelUnavailable, Progress, resolve_model_paths
from .context import ExtraContext, PromptParts, split_document, wants_multiline
from .fim import build_prompt, resolve_layout
from .postprocess import POST_CACHE, PRE_CACHE, FilterContext, run
from .suggestions import SuggestionCache

__all__ = ["CompletionRequest", "CompletionService", "RequestStats", "Suggestion"]

log = logging.getLogger(__name__)

PROMPT_SLACK_TOKENS = 8
"""KV cells left free beyond the prompt and ``max_tokens``, so a full prompt still fits."""


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """A completion at ``offset`` (a str index) of ``text``.

    ``budget_ms`` bounds how long the caller waits: when it runs out the complete lines so far
    (or the partial first line) are answered and generation goes on into the suggestion cache.
    """

    uri: str
    text: str
    offset: int
    path: str = ""
    language_id: str = ""
    budget_ms: float | None = None


@dataclass(slots=True)
class Suggestion:
    """What to show; ``stats`` says what the engine did for it (None when it did nothing)."""

    text: str
    cached: bool = False
    stats: RequestStats | None = None
    latency_ms: float = 0.0
    stop_reason: str = ""
    extra: dict = field(default_factory=dict)


class CompletionService:
    """Turns documents and cursors into suggestions using one engine.

    It owns the settings: ``config`` is replaced only by ``reconfigure``.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.engine: Engine | None = None
        self.error: str | None = None
        self.suggestions = SuggestionCache()
        self.extra = ExtraContext()

    # -- model lifecycle (worker thread) --------------------------------------------------------

    def load(self, progress: Progress | None = None) -> str | None:
        """Load the engine; returns an error message (and keeps serving empty) on failure."""
        self.close()
        try:
            target, draft = resolve_model_paths(self.config, progress)
            self.engine = Engine(target, draft, self.config)
            self.error = None
        except (ModelUnavailable, ModelLoadError, OSError, ValueError) as exc:
            self.error = f"lsp-coder: no model loaded: {exc}"
            log.error(self.error)
        return self.error

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    @property
    def loaded(self) -> bool:
        """Whether a model is loaded."""
        return self.engine is not None

    def describe(self) -> dict[str, Any]:
        """The loaded model's figures and warnings (``Engine.describe``); {} without one."""
        return self.engine.describe() if self.engine is not None else {}

    # -- settings and documents (event loop) ----------------------------------------------------

    def reconfigure(self, config: Config) -> bool:
        """Take new settings; returns True when the model must be reloaded (call ``load``).

        Settings that need no reload reach the engine at the start of the next request, on the
        worker thread, never during a decode.
        """
        old = self.config
        self.config = config
        return config.model != old.model or config.cache != old.cache or (
            config.speculative.draft_model != old.speculative.draft_model)

    def forget(self, uri: str) -> None:
        """A document closed: drop its suggestions and its place in the extra context."""
        self.suggestions.forget(uri)
        self.extra.forget(uri)

    def snapshot(self) -> dict[str, Any]:
        """Whether a model is loaded, the load error, and the prefix cache's KV use.

        Keys: ``model_loaded``, ``error`` and, with a model, ``kv_used_bytes``,
        ``kv_budget_bytes``, ``kv_evicted_blocks`` (see ``engine.MemoryStats``).
        """
        engine = self.engine
        out: dict[str, Any] = {"model_loaded": engine is not None, "error": self.error}
        if engine is not None:
            out.update(asdict(engine.memory_stats()))
        return out

    # -- completion -----------------------------------------------------------------------------

    def cached(self, req: CompletionRequest) -> Suggestion | None:
        """Answer from the suggestion cache if the user typed along a shown suggestion."""
        prefix, rest_of_line = _around_cursor(req.text, req.offset)
        hit = self.suggestions.lookup(req.uri, prefix, rest_of_line)
        if hit is None:
            return None
        text = run(POST_CACHE, hit.remainder, self._filter_context(req, prefix))
        return Suggestion(text, cached=True) if text else None

    def complete(self, req: CompletionRequest,
                 answer_early: Callable[[Suggestion], None] | None = None,
                 hint: str = "", cancelled: Callable[[], bool] = lambda: False) -> Suggestion:
        """Generate a suggestion for ``req`` (worker thread).

        Args:
            req: the document and cursor.
            answer_early: called at most once with a time-boxed answer (complete lines so far)
                when ``req.budget_ms`` runs out; generation then goes on into the cache.
            hint: the not-yet-typed rest of a previous suggestion, drafted for free.
            cancelled: polled between decode steps and ubatches; True stops the work.

        Returns:
            The full (postprocessed) suggestion; empty when there is no model or nothing to say.
        """
        start = time.perf_counter()
        engine = self.engine
        if engine is None:
            return Suggestion("", stop_reason="no_model")
        config = self.config  # one version of the settings for the whole request
        if engine.config is not config:
            engine.update(config)
        cc = config.completion
        prefix_tokens, suffix_tokens, extra_tokens = _fit_budgets(
            cc.prefix_tokens, cc.suffix_tokens, cc.extra_context_tokens,
            engine.cache.budget - cc.max_tokens - PROMPT_SLACK_TOKENS)
        parts = split_document(req.text, req.offset, prefix_tokens=prefix_tokens,
                               suffix_tokens=suffix_tokens)
        self.extra.visit(req.uri, req.path or req.uri, req.text, req.offset)
        extra = self.extra.chunks(req.uri, extra_tokens)
        parts = PromptParts(extra, parts.above, parts.line_prefix, parts.suffix)
        multiline = wants_multiline(parts)
        prompt = build_prompt(engine.template, parts, engine.tokenize, engine.detokenize,
                              prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens,
                              extra_tokens=extra_tokens,
                              layout=resolve_layout(cc.fim_layout, engine.architecture))
        max_lines = cc.max_lines if multiline else 1
        ctx = FilterContext(prefix=req.text[: req.offset], suffix=req.text[req.offset :],
                            multiline=multiline)
        early = _EarlyAnswer(answer_early, req.budget_ms, start, ctx)
        gen = GenerateRequest(
            prompt=prompt.tokens,
            max_tokens=cc.max_tokens,
            temperature=cc.temperature,
            seed=cc.seed,
            hint=engine.tokenize(prompt.heal + hint) if hint else [],
            corpus=engine.tokenize(self.suggestions.latest(req.uri)),
            heal=prompt.heal,
            stop=_line_limit(max_lines),
            speculative=config.speculative.enabled,
            cancelled=cancelled,
            on_text=early.on_text if answer_early is not None else None,
        )
        result = engine.generate(gen)
        raw = run(PRE_CACHE, result.text, ctx)
        text = run(POST_CACHE, raw, ctx)
        if result.stop_reason != "cancelled" and text:
            prefix, rest_of_line = _around_cursor(req.text, req.offset)
            self.suggestions.store(req.uri, prefix, rest_of_line, text)
        return Suggestion(text, stats=result.stats, stop_reason=result.stop_reason,
                          latency_ms=(time.perf_counter() - start) * 1000,
                          extra={"answered_early": early.sent})

    def _filter_context(self, req: CompletionRequest, prefix: str) -> FilterContext:
        parts = PromptParts((), "", prefix[prefix.rfind("\n") + 1 :], req.text[req.offset :])
        return FilterContext(prefix=prefix, suffix=req.text[req.offset :],
                             multiline=wants_multiline(parts))


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
                             stop_reason="time_box"))


def _fit_budgets(prefix: int, suffix: int, extra: int, room: int) -> tuple[int, int, int]:
    """Scale the prompt's token budgets down together when they exceed the KV room."""
    total = prefix + suffix + extra
    if total <= room:
        return prefix, suffix, extra
    scale = max(room, 16) / total
    return max(8, int(prefix * scale)), int(suffix * scale), int(extra * scale)


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


def _around_cursor(text: str, offset: int) -> tuple[str, str]:
    prefix = text[:offset]
    rest = text[offset:]
    return prefix, rest.split("\n", 1)[0]
