"""The in-process llama.cpp engine behind the ``Backend`` interface (``[backend] kind = "local"``).

It fits the token prompt itself (the settings' budgets scaled to its KV cache, the model's own
FIM tokens, token healing, the exact token budgets) and hands the engine what only it can use:
the rest of a suggestion being typed through as a free draft and the document's latest
suggestion for n-gram drafts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import NamedTuple

from ..config import Config
from ..engine.engine import Engine
from ..engine.generate_request import GenerateRequest
from ..prompt_parts import WINDOW_QUANTUM_LINES, PromptPart
from ..shared_types import BackendResult, FimQuery, PrefillResult
from .cold_prompt import ColdPrompts
from .local_prompt import Prompt, build_prompt, fit_budgets, resolve_layout

log = logging.getLogger(__name__)

PROMPT_SLACK_TOKENS = 8
"""KV cells left free beyond the prompt and ``max_tokens``, so a full prompt still fits."""


class Choice(NamedTuple):
    """A prompt a request would read."""

    query: FimQuery
    """What it was built for (gathered)."""
    full: Prompt
    """The full prompt."""
    short: Prompt | None
    """The short one for a cold cache read instead (None: the full one)."""

    @property
    def read(self) -> Prompt:
        """The one read."""
        return self.short or self.full


class LocalBackend:
    """Completions from the engine in this process; call from the worker thread."""

    kind = "local"
    can_prefill = True
    shared = False

    def __init__(self, engine: Engine, config: Callable[[], Config]) -> None:
        self.engine = engine
        self.config = config
        """The current settings (the completion service owns them)."""
        self._cold = ColdPrompts(engine, self._prompt)
        """The short prompts for cold caches."""

    def _gathered(self, query: FimQuery) -> FimQuery:
        """``query`` with the settings' budgets scaled down together to fit the KV cache, and
        its pieces gathered for them."""
        b = query.budget
        room = self.engine.cache.budget - query.max_tokens - PROMPT_SLACK_TOKENS
        prefix, suffix, extra = fit_budgets(b.prefix, b.suffix, b.extra, room)
        budget = replace(b, prefix=prefix, suffix=suffix, extra=extra)
        return replace(query, budget=budget, sources=query.sources.gather(budget))

    def complete(self, query: FimQuery) -> BackendResult:
        engine = self.engine
        config = self._settings()
        query = self._gathered(query)
        prompt, short, held = self._request_prompt(query, config)
        parts = query.parts
        result = engine.generate(GenerateRequest(
            prompt=prompt.tokens,
            max_tokens=query.max_tokens,
            temperature=query.temperature,
            seed=query.seed,
            hint=engine.tokenize(prompt.heal + query.hint) if query.hint else [],
            corpus=engine.tokenize(query.corpus),
            heal=prompt.heal,
            stop=query.stop,
            speculative=config.speculative.enabled,
            cancelled=query.cancelled,
            yielding=query.stop_between_chunks,
            on_text=query.on_text,
            idle=query.idle,
            document=query.uri or None,
            members=parts.members,
            line_before=parts.line_prefix,
        ))
        result.stats.short_prompt = short
        result.stats.held_section = held
        return BackendResult(result.text, result.stop_reason, result.stats)

    def _request_prompt(self, query: FimQuery, config: Config,
                        branch: bool = False) -> tuple[Prompt, bool, bool]:
        """The prompt a request for ``query`` reads now (``branch``: once idle work has read
        it), whether it is the short one (or the held one: idle work reads the full one
        next), and whether it holds the document's last section (``_held``)."""
        choice = self._chosen(query, config, branch)
        held = self._held(choice, config, branch)
        if held is not None:
            choice = held
        if choice.short is not None:  # the document's kept front and window follow it
            self._cold.keep(choice.query, choice.short, choice.full)
        return choice.read, choice.short is not None or held is not None, held is not None

    def _chosen(self, query: FimQuery, config: Config, branch: bool) -> Choice:
        """The prompt a request for ``query`` reads (``ColdPrompts.choose``, keeping
        nothing yet)."""
        full = self._prompt(query, config)
        return Choice(query, full, self._cold.choose(query, config, full, with_section=branch,
                                                     keep=False))

    def _held(self, choice: Choice, config: Config, branch: bool) -> Choice | None:
        """The choice with the other files' section of the document's last request
        (``PromptParts.held_extra``) where a request reads it within ``idle.cold_prompt_ms``
        and not ``choice``, the new section's: the section sits first, so a new one is
        otherwise read whole at the key that brings it (seconds on a CPU). Only with idle
        work on, which reads the full prompt with the new section next."""
        idle = config.idle
        held_parts = choice.query.parts.held()
        if held_parts is None or not (idle.enabled and idle.cold_prompt_ms):
            return None
        new = self._uncached(choice.read)
        if self._readable(new, idle.cold_prompt_ms):
            return None
        held = self._chosen(replace(choice.query, sources=held_parts), config, branch)
        old = self._uncached(held.read)
        if not self._readable(old, idle.cold_prompt_ms):
            return None
        log.debug("held the last section: %d tokens to read instead of %d", old, new)
        return held

    def _uncached(self, prompt: Prompt) -> int:
        """How many of ``prompt``'s tokens the cache lacks."""
        return len(prompt.tokens) - self.engine.cached_prefix(prompt.tokens)

    def _readable(self, tokens: int, limit_ms: int) -> bool:
        return tokens * self.engine.prefill_token_ms <= limit_ms

    def forget(self, uri: str) -> None:
        """A document closed: drop the start of its short window (any thread)."""
        self._cold.forget(uri)

    def prefill(self, query: FimQuery, part: PromptPart = "request",
                in_view: bool = False) -> PrefillResult:
        """Evaluate a prompt onto a spare sequence at idle priority (``engine.prefill``; see
        ``Backend.prefill``)."""
        engine = self.engine
        config = self._settings()
        query = self._gathered(query)
        short = False
        if part in ("request", "branch"):
            prompt, short, _ = self._request_prompt(query, config, branch=part == "branch")
            tokens = prompt.tokens
        else:
            full = self._prompt(query, config)
            tokens = full.tokens
            step = None
            if part == "full":  # the short prompt with the section first, while it is cold
                step = self._cold.step_up(query, config, full)
            elif part == "front":  # the short prompt with the full one's front first
                step = self._cold.front_first(query, config, full)
            if step is not None:
                tokens, short = step.tokens, True
        suffix = engine.template.suffix
        if part == "shared" and suffix >= 0 and suffix in tokens:
            tokens = tokens[: tokens.index(suffix)]
        result = engine.prefill(tokens, query.cancelled, query.stop_between_chunks, in_view,
                                query.uri or None)
        return replace(result, short_prompt=short) if short else result

    def _settings(self) -> Config:
        """One version of the settings for a whole call, given to the engine first."""
        config = self.config()
        if self.engine.config is not config:
            self.engine.update(config)
        return config

    def _prompt(self, query: FimQuery, config: Config,
                window_step_lines: int = WINDOW_QUANTUM_LINES,
                window_drop_lines: int | None = None,
                extra_head_tokens: int | None = None) -> Prompt:
        """The one place the prompt is fitted: the pieces of a gathered ``query``
        (``_gathered``) held to its budgets in tokens (``build_prompt``); the short prompts
        for a cold cache are built here too, with their own budgets."""
        engine = self.engine
        budget = query.budget
        return build_prompt(engine.template, query.parts, engine.tokenize, engine.detokenize,
                            prefix_tokens=budget.prefix,
                            suffix_tokens=budget.suffix,
                            extra_tokens=budget.extra,
                            layout=resolve_layout(config.completion.fim_layout,
                                                  engine.architecture),
                            window_step_lines=window_step_lines,
                            window_drop_lines=window_drop_lines,
                            extra_head_tokens=extra_head_tokens)

    def count_tokens(self, text: str) -> int:
        return len(self.engine.tokenize(text))

    def describe(self) -> dict:
        return {"kind": self.kind, **self.engine.describe()}

    def status(self) -> dict:
        return {"kind": self.kind}

    def memory(self) -> dict:
        return asdict(self.engine.memory_stats())

    def ubatches_done(self) -> int:
        return self.engine.ubatches_done

    def close(self) -> None:
        self.engine.close()
