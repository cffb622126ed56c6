"""The short prompts for a cold cache, built: at most ``idle.cold_prompt_tokens`` of the open
file around the cursor, with the lines that open the cursor's scopes in front of the window
(``scope_head``), and a window that starts where the document's last one did, with the lines
the last one put in front of it, while that costs less to read (``cold_prompt.ColdPrompts``
chooses among them)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from cachetools import LRUCache

from ..config import Config
from ..engine.engine import Engine
from ..prompt_parts import CHARS_PER_TOKEN, IMPORTS_SHARE, PromptParts
from ..shared_types import FimQuery
from .import_use import imports_used
from .local_prompt import Prompt, fit_budgets, line_tokens
from .scope_head import scope_head

COLD_WINDOW_STEP_LINES = 4
"""The short prompt for a cold cache drops lines above in steps of this many: a step of
``WINDOW_QUANTUM_LINES`` could drop most of a window of a few hundred tokens."""

ANCHOR_LINES = 4
"""A short window's start is found again by this many lines of text."""

HEAD_KEPT_SAVING = 2
"""A short prompt keeps the lines the document's last one put before its window only where that
at least halves what it reads: where the window moved too, both read it again, and the lines
built afresh fit the new window."""

ANCHORED_DOCUMENTS = 64
"""Documents whose short window start is remembered (least recently used ones are dropped)."""

BuildPrompt = Callable[..., Prompt]
"""``LocalBackend._prompt``: (query, config, window_step_lines=, window_drop_lines=,
extra_head_tokens=) -> Prompt."""


class ShortWindows:
    """Builds the short prompts and remembers where each document's window started (worker
    thread; ``forget`` from any)."""

    def __init__(self, engine: Engine, build: BuildPrompt) -> None:
        self._engine = engine
        self._build = build
        self._anchors: LRUCache[str, list[str]] = LRUCache(maxsize=ANCHORED_DOCUMENTS)
        """Per document, the first lines of the window of its last short prompt."""
        self._heads: LRUCache[str, str] = LRUCache(maxsize=ANCHORED_DOCUMENTS)
        """Per document, the lines its last short prompt put before the window."""
        self._lock = threading.Lock()

    def short(self, short_query: FimQuery, config: Config, head: int, start: int | None,
              full_tokens: int) -> tuple[Prompt, int]:
        """The short prompt with the first ``head`` tokens of the section, and how many of its
        tokens the cache lacks; its window starts where the last one did (``start``) when
        that leaves less to read and it is no longer than the full prompt (``full_tokens``),
        and it keeps the lines the last one put before that window where that halves what it
        reads (``kept_head``)."""
        cached = self._engine.cached_prefix
        short = self.scoped(short_query, config, window_step_lines=COLD_WINDOW_STEP_LINES,
                            extra_head_tokens=head)
        short_new = len(short.tokens) - cached(short.tokens)
        at_start = short  # built with the window start the kept lines are tried at
        if start is not None and start != short.dropped_lines:
            at_start = held = self.scoped(short_query, config, window_drop_lines=start,
                                          extra_head_tokens=head)
            held_new = len(held.tokens) - cached(held.tokens)
            if len(held.tokens) <= full_tokens and held_new < short_new:
                short, short_new = held, held_new
        kept = self.kept_head(short_query, config, at_start.head, extra_head_tokens=head,
                              window_drop_lines=at_start.dropped_lines)
        if kept is not None and len(kept.tokens) <= full_tokens:
            kept_new = len(kept.tokens) - cached(kept.tokens)
            if kept_new * HEAD_KEPT_SAVING < short_new:
                short, short_new = kept, kept_new
        return short, short_new

    def kept_head(self, short_query: FimQuery, config: Config, fresh_head: str,
                  scope_from: int = 0, with_imports: bool = True, **how: int) -> Prompt | None:
        """The short prompt built ``how`` with the lines the document's last one put before
        its window, when they differ from those built afresh (``fresh_head``) and the file
        still has them above this window (None otherwise): taken where it reads less than
        half of what the prompt built afresh would (``HEAD_KEPT_SAVING``).

        Those lines follow the window's lines: a name the user just typed can add an import
        statement, a line typed at another indentation can change the scopes, and every
        token after a changed line is read again (300 tokens, 3 s on a 2-core CPU, in the
        Enter after a line that used a new name). Where the cache holds the last ones, the
        prompt keeps them until the window moves; the full prompt has all the imports."""
        with self._lock:
            head = self._heads.get(short_query.uri)
        if head is None or head == fresh_head:
            return None
        parts = short_query.parts
        prompt = self._build(replace(short_query, sources=replace(parts, imports=head)),
                             config, **how)
        lines, imports = _head_sources(parts, config, scope_from, with_imports)
        above = lines[: max(0, prompt.dropped_lines - scope_from)]
        present = {line.strip() for line in [*imports.splitlines(), *above]}
        if not all(line.strip() in present for line in head.splitlines()):
            return None
        return replace(prompt, head=head)

    def scoped(self, short_query: FimQuery, config: Config, scope_from: int = 0,
               with_imports: bool = True, **how: int) -> Prompt:
        """The short prompt built ``how``, with the lines that open the cursor's scopes at
        its front when its window starts below them (``scope_head``, among the lines from
        ``scope_from`` on), after the file's import statements that bind a name the window
        uses (``import_use``, among ``PromptParts.head_imports``; ``idle.cold_prompt_imports``
        and ``with_imports``: not after a front of the full prompt, which holds them all),
        within the import lines' share of the budget, counted in tokens as ``build_prompt``
        fits the import lines (``line_tokens``), so it keeps them all. Their room can push
        the window's start down past another such line: built again then; where the start
        still moves after three builds, a fourth keeps the last start with its own import and
        scope lines (not those worked out for another start)."""
        parts = short_query.parts
        lines, file_imports = _head_sources(parts, config, scope_from, with_imports)
        short_query = replace(short_query, sources=replace(parts, imports=""))
        line = parts.line_prefix
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        python = short_query.uri.endswith((".py", ".pyi"))
        room = short_query.budget.prefix // IMPORTS_SHARE
        tokenize = self._engine.tokenize

        def size(text: str) -> int:
            return line_tokens(text, tokenize)

        after_line = parts.suffix.find("\n")
        below = "" if after_line < 0 else parts.suffix[after_line + 1 :][
            : short_query.budget.suffix * CHARS_PER_TOKEN]
        def head_for(prompt: Prompt) -> str:
            start = max(0, prompt.dropped_lines - scope_from)
            scopes = scope_head(lines, start, indent, python)
            return imports_used(file_imports, "".join(lines[start:]), below,
                                room - size(scopes), size) + scopes

        prompt = self._build(short_query, config, **how)
        for attempt in range(3):
            head = head_for(prompt)
            if head == short_query.parts.imports:
                break
            if attempt == 2:  # the start moves back and forth: keep the last, with its lines
                how = {**how, "window_drop_lines": prompt.dropped_lines}
            short_query = replace(short_query,
                                  sources=replace(short_query.parts, imports=head))
            prompt = self._build(short_query, config, **how)
        return replace(prompt, head=short_query.parts.imports)

    def remember(self, uri: str, lines: list[str], short: Prompt) -> None:
        """``short`` was chosen for ``uri`` (``lines``: the lines above the cursor): the next
        short prompts start their window there while those lines are there, and may keep the
        lines it put before the window (``kept_head``)."""
        with self._lock:
            self._anchors[uri] = lines[short.dropped_lines : short.dropped_lines + ANCHOR_LINES]
            self._heads[uri] = short.head

    def anchored_start(self, uri: str, lines: list[str]) -> int | None:
        """Where the document's last short window started among ``lines`` (the lines above),
        if those lines are still there.

        The short window slides down a few lines at a time as lines are added above the
        cursor (Enter, an accepted suggestion), and a moved start changes every token after
        it. Keeping the start the cache holds costs a longer prompt (at most the full one),
        read once, instead.
        """
        with self._lock:
            anchor = self._anchors.get(uri)
        if not anchor:
            return None
        n = len(anchor)
        return next((i for i in range(len(lines) - n, -1, -1) if lines[i : i + n] == anchor),
                    None)

    def forget(self, uri: str) -> None:
        """A document closed: drop the start of its short window."""
        with self._lock:
            self._anchors.pop(uri, None)
            self._heads.pop(uri, None)


def _head_sources(parts: PromptParts, config: Config, scope_from: int,
                  with_imports: bool) -> tuple[list[str], str]:
    """What a short prompt's lines before its window come from: the lines above the cursor
    from ``scope_from`` on, and the open file's import statements (none without
    ``with_imports`` or ``idle.cold_prompt_imports``)."""
    lines = (parts.above + parts.recent).splitlines(keepends=True)[scope_from:]
    imports = parts.head_imports if with_imports and config.idle.cold_prompt_imports else ""
    return lines, imports


def cold_budgets(prefix: int, suffix: int, limit: int) -> tuple[int, int]:
    """The (prefix, suffix) budgets of the short prompt for a cold cache: the full prompt's,
    scaled down together to ``limit`` tokens, with no other files."""
    short_prefix, short_suffix, _ = fit_budgets(prefix, suffix, 0, limit)
    return short_prefix, short_suffix
