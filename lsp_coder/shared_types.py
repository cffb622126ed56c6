"""The records every layer hands the next: what to complete, why it stopped, what it cost.

This is the ground floor: it imports nothing of lsp_coder, so the completion layer, every
backend (the in-process engine and the HTTP ones) and the engine itself can share these types
without importing each other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal, Protocol

StopRule = Callable[[str], int | None]
"""Given the text generated so far, the length to cut it to and stop, or None to go on."""

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


class StopReason(StrEnum):
    """Why a suggestion ended. A ``str``: records and stats carry the plain value."""

    EOG = "eog"
    """The model ended its answer (an end-of-generation token)."""
    MAX_TOKENS = "max_tokens"
    """``max_tokens`` were generated."""
    STOP_RULE = "stop"
    """A stop rule (first line, line limit) cut the text."""
    CANCELLED = "cancelled"
    """The request was cancelled (a newer one, ``$/cancelRequest``, shutdown)."""
    BACKEND_ERROR = "backend_error"
    """The serving engine failed this request."""
    BACKEND_DOWN = "backend_down"
    """The serving engine is in an outage's backoff: nothing was asked."""
    NO_MODEL = "no_model"
    """No model is loaded and no serving engine configured."""
    SUPERSEDED = "superseded"
    """A newer request for the same document replaced this one before it ran."""
    TIME_BOX = "time_box"
    """The budget ran out: the complete lines so far were answered, the rest goes on."""
    ERROR = "error"
    """The work raised; the request was answered empty."""
    EXCLUDED = "excluded"
    """The document is excluded from the model (``[context] exclude``, an ignore file, a file
    that holds secrets): nothing was asked."""


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
    """Qualifier (a module the open file imports) -> every name it offers: a backend that
    picks the tokens keeps the names written after ``qualifier.`` to them (not part of the
    prompt's text, so not of its equality)."""

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


@dataclass(frozen=True, slots=True)
class FimQuery:
    """What to complete, as text pieces in document order (each within its token budget), and
    how: the budgets, the sampling, the stop rule and the callbacks of one request."""

    uri: str
    """The document (prefix caches tell a document's older states by it)."""
    sources: PromptSources
    """Where the prompt's pieces come from (``PromptParts`` when they are gathered already)."""
    budget: PromptBudget = PromptBudget()
    """The token budgets the pieces are gathered for and fitted to."""
    max_tokens: int = 64
    """The most tokens to generate."""
    temperature: float = 0.0
    """0 decodes greedily."""
    seed: int = 0
    """The sampling seed (temperature above 0)."""
    stop: StopRule | None = None
    """Where to cut the text and stop (the first line, a line limit)."""
    budget_ms: float | None = None
    """How long the caller waits before the complete lines so far are answered."""
    cancelled: Callable[[], bool] = lambda: False
    """Polled between steps; True stops the work as cancelled."""
    on_text: Callable[[str], None] | None = None
    """Told the text so far as it grows."""
    hint: str = ""
    """The not-yet-typed rest of a shown suggestion (the local engine drafts it for free)."""
    corpus: str = ""
    """The document's latest suggestion (n-gram drafts for the local engine)."""
    idle: bool = False
    """Idle work (a prefetch): the local engine runs it on a branch of its cache."""
    stop_between_chunks: Callable[[], bool] = lambda: False
    """Once true, stop after the running chunk of work, which stays cached (an idle
    prefill's chunk; a request's read of its prompt, and past it at once), where
    ``cancelled`` aborts it."""

    @property
    def parts(self) -> PromptParts:
        """The prompt's pieces for ``budget`` (gathered once per budget by the source)."""
        return self.sources.gather(self.budget)


@dataclass(slots=True)
class RequestStats:
    """What the engine did for one request (summed into ``lspCoder.stats``)."""

    prompt_tokens: int = 0
    """Tokens in the prompt."""
    reused_tokens: int = 0
    """Prompt tokens served from a cache."""
    shifted_tokens: int = 0
    """Reused tokens that were moved to another position (RoPE shift)."""
    evaluated_tokens: int = 0
    """Prompt tokens evaluated for this request."""
    generated_tokens: int = 0
    """Tokens generated."""
    prefill_ms: float = 0.0
    """Time spent evaluating the prompt."""
    decode_ms: float = 0.0
    """Time spent generating."""
    decode_steps: int = 0
    """Target-model decode calls while generating."""
    draft_proposed: dict[str, int] = field(default_factory=dict)
    """Draft tokens proposed, by drafter."""
    draft_accepted: dict[str, int] = field(default_factory=dict)
    """Draft tokens accepted, by drafter."""
    near_ties: int = 0
    """Greedy picks whose logit gap was small enough for batch numerics to flip."""
    known_tokens: int = 0
    """Generated tokens taken from the greedy memory (verified without a decode)."""
    short_prompt: bool = False
    """The prompt was the short one for a cold cache (``idle.cold_prompt_tokens``), or held
    the document's last section (``held_section``): idle work reads the full one next."""
    held_section: bool = False
    """The prompt held the other files' section the document's last request read, as the
    cache lacked the prompt with a new one (``PromptParts.held_extra``)."""
    second_pass: bool = False
    """The answer is a second one, from a section that added what the first draft named
    (``context.second_pass``); the figures are both passes'."""
    token_probs: list[float | None] = field(default_factory=list)
    """The model's probability of each generated token as it was picked (a token recalled
    from the greedy memory: as it was when first picked; None: not known; empty where the
    backend does not say)."""
    first_line_tokens: int = 0
    """How many of the generated tokens make the answer's first line with text (with the
    line breaks before it and the one after it)."""


@dataclass(slots=True)
class BackendResult:
    """One backend's answer to a ``FimQuery``."""

    text: str
    """The generated text, cut by the stop rule."""
    stop_reason: StopReason
    """Why it ended."""
    stats: RequestStats | None = None
    """What it cost (None where the backend did no work)."""
    server_cached_tokens: int | None = None
    """Prompt tokens the engine reports it served from its own cache (None: it does not say)."""


@dataclass(frozen=True, slots=True)
class PrefillResult:
    """What one idle prefill did."""

    outcome: str
    """"done", "cached" (nothing to evaluate), "cancelled" (stopped by a request; the
    ``evaluated_tokens`` were kept), or "no_room" (no spare sequence, or the KV budget is full
    of a request's blocks)."""
    prompt_tokens: int
    """Tokens in the prompt."""
    reused_tokens: int = 0
    """Prompt tokens already cached."""
    evaluated_tokens: int = 0
    """Prompt tokens evaluated."""
    prefill_ms: float = 0.0
    """Time spent evaluating."""
    short_prompt: bool = False
    """The prompt was the short one for a cold cache (``idle.cold_prompt_tokens``)."""
