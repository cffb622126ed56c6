"""What to complete: a FIM prompt's pieces, their budgets, where they come from.

The ground floor with ``shared_types``: it imports nothing of lsp_coder, so the completion
layer, every backend and the engine can share these records without importing each other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

PromptPart = Literal["request", "branch", "shared", "full", "front"]
"""Which prompt an idle prefill holds: the one a request for the query would read now; the one
it will read once idle work has read it (a branch the user has not reached yet: the local
engine's short prompt for a cold cache then keeps the other files' section); only the part
before the text below the cursor (a file's window, shared by every cursor in it); the full
prompt even where a request would now read a shorter one (the local engine's short prompt for
a cold cache; there, first the short prompt with the other files' section while a request
could not read it in time, and the result says ``short_prompt``); the full prompt too, where
the local engine first reads its short prompt for a cold cache that starts with the full
prompt's front (``idle.cursor_prompt = "front"``; the result says ``short_prompt``)."""

WINDOW_QUANTUM_LINES = 16
"""Window edges move in steps of this many lines, so the prompt (and its cache) stays stable."""

IMPORTS_SHARE = 4
"""The open file's import lines (``PromptParts.imports``) take at most 1/N of the prefix
budget."""

CHARS_PER_TOKEN = 3
"""A conservative estimate for code, by which sources gather text for a token budget (the
backend's fit then counts exactly)."""


@dataclass(frozen=True, slots=True)
class PromptParts:
    """The pieces of a FIM prompt, in document order.

    ``above`` ends where ``recent`` starts; ``recent`` is the lines just above the cursor line
    that go after the middle token with it (see ``completion.context.split_document``).
    """

    extra: tuple[tuple[str, str], ...]
    """Chunks of other files as (path, text), in a stable order (they go first)."""
    above: str
    """The lines above the cursor line that go before the middle token."""
    line_prefix: str
    """The cursor line's text before the cursor."""
    suffix: str
    """The rest of the cursor line and the lines below."""
    recent: str = ""
    """The lines just above the cursor line that go after the middle token with it."""
    repo: str = ""
    """The workspace folder's name (the repository line of the model's format)."""
    path: str = ""
    """The open file's path, written before it when ``extra`` is not empty."""
    imports: str = ""
    """The open file's import lines above ``above`` (they go at its front)."""
    head_imports: str = ""
    """All of the open file's import lines above the cursor line (a short prompt keeps those
    its window uses)."""
    held_extra: tuple[tuple[str, str], ...] | None = None
    """``extra`` with the other files' section of the prompt the document's last request
    read, where that differs (None: the same, or none): a backend whose cache lacks the prompt
    with the new section may read this one meanwhile (``LocalBackend``)."""
    members: Mapping[str, frozenset[str]] = field(default_factory=dict, compare=False)
    """Qualifier (a module the open file imports; or ``from X import``, the head of the
    import statement the cursor line starts) -> every name it offers: a backend that picks
    the tokens keeps the names written after ``qualifier.`` (or listed after the head) to them
    (not part of the prompt's text, so not of its equality)."""

    @property
    def prefix(self) -> str:
        return self.above + self.recent + self.line_prefix

    def gather(self, budget: PromptBudget) -> PromptParts:
        """Pieces already gathered are their own source (``PromptSources``)."""
        return self

    def held(self) -> PromptParts | None:
        """These pieces with ``held_extra`` for ``extra`` (None without one)."""
        if self.held_extra is None:
            return None
        return replace(self, extra=self.held_extra, held_extra=None)

    def cursor_line(self) -> tuple[str, str]:
        """The cursor line's text before the cursor as (its indentation, the rest).

        The indentation goes before the suffix, at the end of the lines above, as in the
        plain prompt the model is trained on: after the middle token the model had to start
        inside a whitespace token (healed, it could pick a longer one) and lost exact lines
        (HumanEval single-line, full prompts: 69 of 100, against 72 now and for the plain
        prompt). The rest goes after the middle token, so typing on the line only appends to
        the prompt. With recent lines after the middle token all of it goes there (the text's
        order must hold), and also with nothing after the cursor (the end of a file without a
        last newline): there the 0.5B, with the indentation before the suffix, answered with
        another indentation in 4 of 4 functions begun, and healed after the middle in none.

        Only whole levels go before the suffix, at most one deeper than the last line above
        (``whole_levels``); the rest (alignment, a level being typed space by space) goes
        after the middle token with the code: every key that changes what goes before the
        suffix reads the suffix again, about 80 tokens in the short prompt.
        """
        if self.recent or not self.suffix:
            return "", self.line_prefix
        code = self.line_prefix.lstrip(" \t")
        kept = whole_levels(self.above, self.line_prefix[: len(self.line_prefix) - len(code)])
        return self.line_prefix[:kept], self.line_prefix[kept:]


def whole_levels(above: str, indent: str) -> int:
    """How much of ``indent`` (a line's leading spaces or tabs) is whole levels of indentation
    at most one deeper than the last non-blank line of ``above`` (when it has one). A level is
    a tab, or ``space_unit`` spaces."""
    char = indent[:1]
    if not char:
        return 0
    run = len(indent) - len(indent.lstrip(char))
    lines = above.splitlines()
    unit = 1 if char == "\t" else space_unit(lines)
    last = next((line for line in reversed(lines) if line.strip()), None)
    if last is None:  # nothing above in the window: no line to be one level deeper than
        return run // unit * unit
    return min(run // unit * unit, len(last) - len(last.lstrip(char)) + unit)


def space_unit(lines: list[str]) -> int:
    """The most common step (2 to 8 spaces; the smaller on a tie, 4 without one) by which a
    line is indented deeper than the non-blank line before it (the first, than column 0).
    Not the smallest indentation: a window inside a method may hold no line of the first
    level, and a continuation line may sit at 2 in a file of 4."""
    steps: Counter[int] = Counter()
    previous = 0
    for line in lines:
        if line.strip():
            width = len(line) - len(line.lstrip(" "))
            if 2 <= width - previous <= 8:
                steps[width - previous] += 1
            previous = width
    return max(steps, key=lambda step: (steps[step], -step)) if steps else 4


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """The token budgets of a prompt's pieces (the settings'; a backend may scale them)."""

    prefix: int = 1024
    """The lines above with the cursor line (and the open file's import lines)."""
    suffix: int = 256
    """The rest of the cursor line and the lines below."""
    extra: int = 256
    """The other files' section."""


class PromptSources(Protocol):
    """Where a prompt's pieces come from (the completion layer's documents and other files).

    The backend picks the budget and fits the pieces exactly (``LocalBackend._prompt`` in
    tokens, ``RemoteBackend.prompt_parts`` by counts); a source gathers about that much by
    ``CHARS_PER_TOKEN``. Gathering again for the same budget gives the same pieces.
    """

    def gather(self, budget: PromptBudget) -> PromptParts:
        """The pieces for ``budget``."""
        ...
