"""Which prompt a request reads while the KV cache lacks most of the full one (a file just
opened, a window moved), on a machine where reading it takes longer than a user waits.

Four prompts, richest first:

- the full prompt;
- the short one with the front (``idle.cold_prompt_front``): what the cache holds of the
  full prompt from its start (the section, the import lines, the window's first lines, cut
  after a line's end), then the short window: it costs what the short one alone does, and
  every token idle work read of the full prompt is in it (a cursor at rest reads the full
  prompt from its front, by ``idle.cursor_prompt`` first this prompt with a front up to the
  full prompt's window: ``front_first``); while the cache holds less than the section, the
  part of it the cache holds, then the open file's path line and the short window, in place
  of the short one without the section (a request soon after a file opened on a slow CPU
  reads the short window either way; this one keeps what idle work read before it);
- the short one with the section: the first ``idle.cold_context_tokens`` of the other files'
  section (cut after a line's end, so the full prompt read later reuses them), then at most
  ``idle.cold_prompt_tokens`` of the file nearest the cursor;
- the short one without the section.

Short prompts leave the open file's import lines out (``context.imports``) but for the
statements that bind a name their window's lines use (``idle.cold_prompt_imports``,
``import_use``), and put the lines that open the cursor's scopes (its ``def``, its class)
after those when the window starts below them (``scope_head``).

A request reads the full prompt when its uncached part can be read within
``idle.cold_prompt_ms`` at the measured prefill speed or costs little more than a short
one's (``FULL_FOR_MORE``); else the short one with the front when the cache holds that front,
else the richer short one readable in time, else the one with the least left to read. Idle
work reads richer ones: an Enter or accept branch the short prompt with the section when what
that adds to the prompt a request there would read can be read within
``idle.cold_prompt_ms`` (``choose(with_section=)``), a ``full`` job that one (without the
front), then the full prompt (``step_up``). So the first answer in a
file just opened comes as soon as without other files, and the section joins the answers once
idle work has read it. ``idle.cold_context_first`` makes requests wait for the section instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from cachetools import LRUCache

from ..config import Config
from ..engine.engine import Engine
from ..shared_types import FimQuery
from .local_prompt import Prompt
from .short_window import (
    ANCHORED_DOCUMENTS,
    HEAD_KEPT_SAVING,
    BuildPrompt,
    ShortWindows,
    cold_budgets,
)

FULL_FOR_MORE = 1.25
"""The full prompt answers when the cache lacks at most this many times what it lacks of the
short one: the same wait, give or take, for the whole window and suffix (on a 2-core CPU a
file's full prompt read 6 s after the cursor came to rest lacked about 350 tokens, a little
more than 1.5 s, and its short prompt with the front about 300)."""


class ColdPrompts:
    """Chooses the short prompts for cold caches (worker thread; ``forget`` from any)."""

    def __init__(self, engine: Engine, build: BuildPrompt) -> None:
        self._engine = engine
        self._windows = ShortWindows(engine, build)
        """The short prompts, built."""
        self._fronts: LRUCache[str, list[int]] = LRUCache(maxsize=ANCHORED_DOCUMENTS)
        """Per document, the front of the full prompt its last fronted short prompt kept."""
        self._lock = threading.Lock()

    def choose(self, query: FimQuery, config: Config, full: Prompt,
               with_section: bool = False, keep: bool = True) -> Prompt | None:
        """The short prompt a request for ``query`` reads instead of ``full``, or None (the
        full one): see the module's docstring. Only with idle work on, which fills the
        richer prompts afterwards. ``with_section``: the short prompt with the section when
        what it lacks more than the prompt a request would read can be read within
        ``idle.cold_prompt_ms`` (what idle work reads for a branch the user has not reached
        yet: a request that reaches it while it is read waits for it). ``keep``: the
        document's kept front and window start follow the short prompt (False: the caller
        calls ``keep`` for the prompt it reads)."""
        options = self._options(query, config, full)
        if options is None:
            return None
        full_new, short_query, lines, start = options
        limit_ms = config.idle.cold_prompt_ms
        head = config.idle.cold_context_tokens
        windows = self._windows
        short, short_new = windows.short(short_query, config, head, start, len(full.tokens))
        sectioned = bool(query.parts.extra and head)
        chosen: tuple[Prompt, int] | None = None
        if sectioned and not config.idle.cold_context_first \
                and not self._readable(short_new, limit_ms):
            bare = windows.short(short_query, config, 0, start, len(full.tokens))
            if bare[1] < short_new:
                # What a request reads here (``bare`` or a front). A branch reads the section
                # only when that costs little more: a request that reaches the branch's state
                # while it is read waits for it.
                cheap = self._with_front(query.uri, short_query, config, full, full_new,
                                         start, bare, in_section=True)
                if not (with_section and self._readable(short_new - cheap[1], limit_ms)):
                    chosen = cheap
        if chosen is None:
            chosen = self._with_front(query.uri, short_query, config, full, full_new, start,
                                      (short, short_new), in_section=not sectioned)
        short, short_new = chosen
        if short_new * FULL_FOR_MORE >= full_new:
            return None
        if keep:
            self._keep(query.uri, short, full, lines)
        return short

    def front_first(self, query: FimQuery, config: Config, full: Prompt) -> Prompt | None:
        """What a cursor at rest reads before the full prompt (``idle.cursor_prompt =
        "front"``): the short prompt that starts with the front of ``full`` up to its window
        and ``idle.cursor_front_tokens`` of the window's lines (or as far as the cache holds
        it, if further), kept for the requests after it, which then find it read; None when
        the full prompt is read as soon (short prompts do not apply, or it lacks little more).
        """
        if not config.idle.cold_prompt_front or full.above_at < 0:
            return None
        options = self._options(query, config, full)
        if options is None:
            return None
        full_new, short_query, lines, start = options
        reach = max(len(full.tokens) - full_new, full.above_at + config.idle.cursor_front_tokens)
        fronted = self._fronted(query.uri, short_query, config, full,
                                min(reach, len(full.tokens)), start)
        if fronted is None or fronted[1] * FULL_FOR_MORE >= full_new:
            return None
        short = fronted[0]
        self._keep(query.uri, short, full, lines)
        return short

    def _with_front(self, uri: str, short_query: FimQuery, config: Config, full: Prompt,
                    full_new: int, start: int | None, short: tuple[Prompt, int],
                    in_section: bool) -> tuple[Prompt, int]:
        """``short`` (a prompt and what the cache lacks of it), or the short prompt with the
        front of ``full`` the cache holds where a request takes that instead
        (``idle.cold_prompt_front``, ``_takes_front``)."""
        if not config.idle.cold_prompt_front or full.above_at < 0:
            return short
        fronted = self._fronted(uri, short_query, config, full, len(full.tokens) - full_new,
                                start, in_section=in_section)
        if fronted is not None and self._takes_front(fronted, full, short[0], short[1],
                                                     config.idle.cold_prompt_ms):
            return fronted
        return short

    def _takes_front(self, fronted: tuple[Prompt, int], full: Prompt, short: Prompt,
                     short_new: int, limit_ms: int) -> bool:
        """Whether a request reads ``fronted`` (a prompt and what the cache lacks of it)
        rather than ``short``: one with the whole section in its front when it lacks no more
        or is readable in time; one with part of the section (``short`` has none then) when
        it lacks little more (``FULL_FOR_MORE``) than ``short`` with the open file's path
        line it adds: not when ``short``'s window is read already, but when the cache holds
        only a few first tokens of it (another document's short prompt starts the same)."""
        prompt, new = fronted
        if prompt.front >= full.above_at:
            return new <= short_new or self._readable(new, limit_ms)
        bos = int(self._engine.template.bos >= 0)
        added = len(prompt.tokens) - len(short.tokens) - (prompt.front - bos)
        return new <= (short_new + added) * FULL_FOR_MORE

    def keep(self, query: FimQuery, short: Prompt, full: Prompt) -> None:
        """``short``, chosen for ``query`` with ``keep`` off, is the one read."""
        self._keep(query.uri, short, full, query.parts.above.splitlines(keepends=True))

    def _keep(self, uri: str, short: Prompt, full: Prompt, lines: list[str]) -> None:
        """``short`` was chosen for ``uri``: keep its front's cut and its window's start for
        the keys after it."""
        if short.front:
            with self._lock:
                self._fronts[uri] = full.tokens[: short.front]
        self._windows.remember(uri, lines, short)

    def step_up(self, query: FimQuery, config: Config, full: Prompt) -> Prompt | None:
        """What idle work reads to bring requests for ``query`` nearer the full prompt: the
        short prompt with the section while a request could not read it in time, else None
        (the full prompt is next)."""
        head = config.idle.cold_context_tokens
        if not (query.parts.extra and head) or config.idle.cold_prompt_front:
            return None
        options = self._options(query, config, full)
        if options is None:
            return None
        _, short_query, _, start = options
        windows = self._windows
        short, short_new = windows.short(short_query, config, head, start, len(full.tokens))
        return None if self._readable(short_new, config.idle.cold_prompt_ms) else short

    def forget(self, uri: str) -> None:
        """A document closed: drop the start of its short window and its front."""
        self._windows.forget(uri)
        with self._lock:
            self._fronts.pop(uri, None)

    def _options(self, query: FimQuery, config: Config,
                 full: Prompt) -> tuple[int, FimQuery, list[str], int | None] | None:
        """(what the cache lacks of ``full``, the short prompts' query, the lines above the
        cursor, the window start to keep) when short prompts apply, else None."""
        idle = config.idle
        limit = idle.cold_prompt_tokens
        if not (idle.enabled and limit and idle.cold_prompt_ms) or len(full.tokens) <= limit:
            return None
        full_new = len(full.tokens) - self._engine.cached_prefix(full.tokens)
        if self._readable(full_new, idle.cold_prompt_ms):
            return None
        prefix, suffix = cold_budgets(query.budget.prefix, query.budget.suffix, limit)
        # The short prompts keep only the import statements their window uses
        # (``ShortWindows.scoped``): all of them would make the first answer in a file just
        # opened read them, and the full prompt has them.
        short_query = replace(query, budget=replace(query.budget, prefix=prefix, suffix=suffix))
        lines = query.parts.above.splitlines(keepends=True)
        return full_new, short_query, lines, self._windows.anchored_start(query.uri, lines)

    def _readable(self, new_tokens: int, limit_ms: int) -> bool:
        return new_tokens * self._engine.prefill_token_ms <= limit_ms

    def _fronted(self, uri: str, short_query: FimQuery, config: Config, full: Prompt,
                 reach: int, start: int | None,
                 in_section: bool = False) -> tuple[Prompt, int] | None:
        """The short prompt that starts with the front of ``full`` up to ``reach`` tokens
        (cut after a line's end) and goes on with the short window's lines below it, and how
        many of its tokens the cache lacks; None when ``reach`` falls short of the full
        prompt's window (``idle.cold_prompt_front``), unless ``in_section``: then the short
        prompt with the start of the other files' section that ``reach`` holds
        (``_section_front``). ``reach``: how many tokens of ``full`` the cache holds
        (``choose`` has looked them up), or more for idle work that reads the front
        (``front_first``).

        Reading the full prompt from its front then serves every request: what idle work has
        read of it goes into the next answer, the short window costs what it does alone, and
        the full prompt read later reuses the front. A document keeps the cut of its last
        such prompt while the cache holds it, so the keys typed after it reuse the window
        below the cut instead of reading it again at each cut idle work moves.
        """
        engine = self._engine
        cut = self._front_cut(uri, full, reach, in_section)
        if cut is None:
            return None
        if cut < full.above_at:
            return self._section_front(short_query, config, full, cut, start)
        first = full.dropped_lines + engine.detokenize(full.tokens[full.above_at:cut]).count("\n")
        windows = self._windows
        window, _ = windows.short(short_query, config, 0, start, len(full.tokens))
        how = {"scope_from": first, "with_imports": False, "extra_head_tokens": 0,
               "window_drop_lines": max(first, window.dropped_lines)}
        template = engine.template
        lead = (template.bos >= 0) + 1 + len(template.prefix_lead)
        fresh = windows.scoped(short_query, config, **how)
        best: tuple[Prompt, int] | None = None
        for near in (fresh, windows.kept_head(short_query, config, fresh.head, **how)):
            if near is None:
                continue
            tokens = full.tokens[:cut] + near.tokens[lead:]
            new = len(tokens) - engine.cached_prefix(tokens)
            if len(tokens) <= len(full.tokens) and (
                    best is None or new * HEAD_KEPT_SAVING < best[1]):
                best = Prompt(tokens, near.heal, near.dropped_lines, full.above_at, cut,
                              near.head), new
        return best

    def _front_cut(self, uri: str, full: Prompt, reach: int, in_section: bool) -> int | None:
        """Where a fronted short prompt of ``full`` leaves it (see ``_fronted``): the cut
        of the document's last one while it is within ``reach`` and ``full`` starts the
        same, else after the last line's end within ``reach``; None when ``reach`` falls
        short of the window, unless ``in_section`` (then a cut before the window; None when
        ``reach`` holds no line's end)."""
        with self._lock:
            kept = self._fronts.get(uri)
        if (kept and (in_section or full.above_at <= len(kept)) and len(kept) <= reach
                and full.tokens[:len(kept)] == kept):
            return len(kept)
        detokenize = self._engine.detokenize
        if reach >= full.above_at:
            return line_cut(full.tokens, full.above_at, reach, detokenize)
        return (line_cut(full.tokens, 0, reach, detokenize) or None) if in_section else None

    def _section_front(self, short_query: FimQuery, config: Config, full: Prompt, cut: int,
                       start: int | None) -> tuple[Prompt, int] | None:
        """The short prompt with the other files' section cut where the cache's hold of
        ``full`` ends (``cut``, before the window: the same tokens), and how many of its
        tokens the cache lacks; None when it does not start with them (less than a line of
        code before the cut, or a section ``full`` did not keep)."""
        bos = int(self._engine.template.bos >= 0)
        short, short_new = self._windows.short(short_query, config, cut - bos, start,
                                               len(full.tokens))
        if short.tokens[:cut] != full.tokens[:cut] or len(short.tokens) > len(full.tokens):
            return None
        return replace(short, front=cut), short_new


def line_cut(tokens: list[int], low: int, high: int, detokenize: Callable[[list[int]], str]) -> int:
    """The last cut in ``tokens[low:high]`` right after a token that ends a line (``low``
    when none does)."""
    for end in range(high, low, -1):
        if detokenize(tokens[end - 1 : end]).endswith("\n"):
            return end
    return low
