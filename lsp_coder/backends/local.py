"""The in-process llama.cpp engine behind the ``Backend`` interface (``[backend] kind = "local"``).

It builds the token prompt itself (the model's own FIM tokens, token healing, the exact token
budgets) and hands the engine what only it can use: the rest of a suggestion being typed through
as a free draft and the document's latest suggestion for n-gram drafts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, replace

from cachetools import LRUCache

from ..config import Config
from ..engine.engine import Engine
from ..engine.generator import GenerateRequest
from ..shared_types import (
    WINDOW_QUANTUM_LINES,
    BackendResult,
    FimQuery,
    PrefillResult,
    PromptPart,
)
from .local_prompt import Prompt, build_prompt, resolve_layout

PROMPT_SLACK_TOKENS = 8
"""KV cells left free beyond the prompt and ``max_tokens``, so a full prompt still fits."""

COLD_WINDOW_STEP_LINES = 4
"""The short prompt for a cold cache drops lines above in steps of this many: a step of
``WINDOW_QUANTUM_LINES`` could drop most of a window of a few hundred tokens."""

ANCHOR_LINES = 4
"""A short window's start is found again by this many lines of text."""

ANCHORED_DOCUMENTS = 64
"""Documents whose short window start is remembered (least recently used ones are dropped)."""


class LocalBackend:
    """Completions from the engine in this process; call from the worker thread."""

    kind = "local"
    can_prefill = True
    shared = False

    def __init__(self, engine: Engine, config: Callable[[], Config]) -> None:
        self.engine = engine
        self.config = config
        """The current settings (the completion service owns them)."""
        self._anchors: LRUCache[str, list[str]] = LRUCache(maxsize=ANCHORED_DOCUMENTS)
        """Per document, the first lines of the window of its last short prompt."""
        self._anchors_lock = threading.Lock()
        """``forget`` comes from the event loop, the rest from the worker."""

    def budgets(self, prefix: int, suffix: int, extra: int, max_tokens: int) -> tuple[int, ...]:
        """The prompt budgets, scaled down together to fit the KV cache."""
        return fit_budgets(prefix, suffix, extra,
                           self.engine.cache.budget - max_tokens - PROMPT_SLACK_TOKENS)

    def complete(self, query: FimQuery) -> BackendResult:
        engine = self.engine
        config = self._settings()
        prompt, short = self._request_prompt(query, config)
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
            on_text=query.on_text,
            idle=query.idle,
            document=query.uri or None,
        ))
        result.stats.short_prompt = short
        return BackendResult(result.text, result.stop_reason, result.stats)

    def _request_prompt(self, query: FimQuery, config: Config) -> tuple[Prompt, bool]:
        """The prompt a request for ``query`` reads now, and whether it is the short one."""
        prompt = self._prompt(query, config)
        short = self._cold_prompt(query, config, prompt)
        return (prompt, False) if short is None else (short, True)

    def _cold_prompt(self, query: FimQuery, config: Config, full: Prompt) -> Prompt | None:
        """The short prompt to answer from instead of ``full``, or None.

        Only when the cache holds so little of ``full`` that reading the rest at the measured
        prefill speed would take longer than ``idle.cold_prompt_ms`` (a file just opened, a
        window moved), and the short prompt (at most ``idle.cold_prompt_tokens`` of the lines
        nearest the cursor, after the first ``idle.cold_context_tokens`` of the other files'
        section) has less left to read. Idle
        work then fills the full prompt (a ``full`` branch), so not when idle work is off.
        """
        idle = config.idle
        limit = idle.cold_prompt_tokens
        if not (idle.enabled and limit and idle.cold_prompt_ms) or len(full.tokens) <= limit:
            return None
        engine = self.engine
        full_new = len(full.tokens) - engine.cached_prefix(full.tokens)
        if full_new * engine.prefill_token_ms <= idle.cold_prompt_ms:
            return None
        prefix, suffix = cold_budgets(query.prefix_tokens, query.suffix_tokens, limit)
        # The start of the other files' section stays (the definitions the cursor uses come
        # first): the same first tokens as the full prompt's, so the full prompt read later
        # reuses them.
        short_query = replace(query, prefix_tokens=prefix, suffix_tokens=suffix)
        head = idle.cold_context_tokens
        short = self._prompt(short_query, config, window_step_lines=COLD_WINDOW_STEP_LINES,
                             extra_head_tokens=head)
        short_new = len(short.tokens) - engine.cached_prefix(short.tokens)
        lines = query.parts.above.splitlines(keepends=True)
        start = self._anchored_start(query.uri, lines)
        if start is not None and start != short.dropped_lines:
            held = self._prompt(short_query, config, window_drop_lines=start,
                                extra_head_tokens=head)
            held_new = len(held.tokens) - engine.cached_prefix(held.tokens)
            if len(held.tokens) <= len(full.tokens) and held_new < short_new:
                short, short_new = held, held_new
        if short_new >= full_new:
            return None
        with self._anchors_lock:
            self._anchors[query.uri] = lines[short.dropped_lines :
                                             short.dropped_lines + ANCHOR_LINES]
        return short

    def _anchored_start(self, uri: str, lines: list[str]) -> int | None:
        """Where the document's last short window started among ``lines`` (the lines above),
        if those lines are still there.

        The short window slides down a few lines at a time as lines are added above the
        cursor (Enter, an accepted suggestion), and a moved start changes every token after
        it. Keeping the start the cache holds costs a longer prompt (at most the full one),
        read once, instead.
        """
        with self._anchors_lock:
            anchor = self._anchors.get(uri)
        if not anchor:
            return None
        n = len(anchor)
        return next((i for i in range(len(lines) - n, -1, -1) if lines[i : i + n] == anchor),
                    None)

    def forget(self, uri: str) -> None:
        """A document closed: drop the start of its short window (any thread)."""
        with self._anchors_lock:
            self._anchors.pop(uri, None)

    def prefill(self, query: FimQuery, part: PromptPart = "request",
                in_view: bool = False) -> PrefillResult:
        """Evaluate a prompt onto a spare sequence at idle priority (``engine.prefill``; see
        ``Backend.prefill``)."""
        engine = self.engine
        config = self._settings()
        short = False
        if part == "request":
            prompt, short = self._request_prompt(query, config)
            tokens = prompt.tokens
        else:
            tokens = self._prompt(query, config).tokens
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
        engine = self.engine
        return build_prompt(engine.template, query.parts, engine.tokenize, engine.detokenize,
                            prefix_tokens=query.prefix_tokens,
                            suffix_tokens=query.suffix_tokens,
                            extra_tokens=query.extra_tokens,
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


def fit_budgets(prefix: int, suffix: int, extra: int, room: int) -> tuple[int, int, int]:
    """Scale the prompt's token budgets down together when they exceed the KV room."""
    total = prefix + suffix + extra
    if total <= room:
        return prefix, suffix, extra
    scale = max(room, 16) / total
    return max(8, int(prefix * scale)), int(suffix * scale), int(extra * scale)


def cold_budgets(prefix: int, suffix: int, limit: int) -> tuple[int, int]:
    """The (prefix, suffix) budgets of the short prompt for a cold cache: the full prompt's,
    scaled down together to ``limit`` tokens, with no other files."""
    short_prefix, short_suffix, _ = fit_budgets(prefix, suffix, 0, limit)
    return short_prefix, short_suffix
