"""Fill-in-the-middle prompts from the model's own FIM tokens.

Layout (PSM, with the cursor line's code after the middle token)::

    [extra files] <PRE> lines-above + indentation <SUF> rest-of-line + lines-below <MID>
    recent-lines + typed-on-this-line

``recent-lines`` are the lines between the last multiple of ``completion.recent_lines`` and the
cursor line: a new line then appends to the prompt instead of moving a line in front of the
suffix, which made every Enter evaluate the whole suffix block again.

or SPM (``completion.fim_layout = "spm"``, for models trained on it, such as CodeLlama; the
order of the FIM paper and of CodeLlama's own ``infilling_prompt_tokens``)::

    [extra files] <PRE> <SUF> rest-of-line + lines-below <MID> lines-above + indentation
    typed-on-this-line

The cursor line's indentation stays with the lines above (``PromptParts.cursor_line``; with
recent lines, or nothing after the cursor, it goes after the middle token too). While the
user types on one line only the tokens after ``<MID>`` change, so each keystroke appends to a
cached prompt. Every piece is tokenized on its own, so an edit in one piece never changes the
tokens of another.

The last token of the typed text is held back and the model's first token is constrained to
start with its text ("token healing"): ``x = foo.ba`` then continues as ``bar`` instead of
being forced to continue after an odd token boundary such as trailing spaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..engine.fim_template import FimTemplate
from ..prompt_parts import IMPORTS_SHARE, WINDOW_QUANTUM_LINES, PromptParts
from .fim_text import FimText, file_entry, repository

Tokenize = Callable[[str], list[int]]
Detokenize = Callable[[list[int]], str]


@dataclass(frozen=True, slots=True)
class Prompt:
    """Prompt tokens and the text the first generated token must start with (may be empty)."""

    tokens: list[int]
    """The prompt's token ids, as the engine reads them."""
    heal: str
    """The text the first generated token must start with (token healing; may be empty)."""
    dropped_lines: int = 0
    """Lines at the front of the text above that the window left out."""
    above_at: int = -1
    """Where the window's lines above the cursor begin in ``tokens`` (after the import
    lines); -1 when they do not follow the prompt's front (no FIM tokens, SPM order)."""
    front: int = 0
    """How many tokens of the full prompt a short prompt for a cold cache starts with (0:
    none, it is not one that starts with the full prompt's front)."""
    head: str = ""
    """The open file's lines a short prompt for a cold cache put before its window (the
    import statements its lines use, the lines that open the cursor's scopes)."""


TYPED_STEP_TOKENS = 64
"""The room kept for the cursor line's typed text (and for the recent lines) grows in steps of
this many tokens; a typed text too long for its budget loses its front in steps of as many."""


def _trim_front(tokens: list[int], limit: int) -> list[int]:
    """The end of a typed text too long for ``limit`` tokens (a very long line).

    The front is dropped in steps of ``TYPED_STEP_TOKENS``, so while the user types the kept
    start stays where it was for that many tokens and the cache keeps the prompt: dropping
    exactly the excess moved the start at every key, and every key read the whole line's
    window again.
    """
    if len(tokens) <= limit:
        return tokens
    return tokens[_steps(len(tokens) - limit) * TYPED_STEP_TOKENS :]


INDENT_SHARE = 4
"""The cursor line's indentation takes at most 1/N of the prefix budget (a pathological line of
thousands of spaces loses its front)."""


def _indentation(text: str, tokenize: Tokenize, limit: int) -> list[int]:
    """Tokens of the cursor line's indentation, its last ``limit`` at most."""
    tokens = tokenize(text) if text and limit > 0 else []
    return tokens[len(tokens) - limit :] if len(tokens) > limit else tokens


def _steps(n: int) -> int:
    """How many steps of ``TYPED_STEP_TOKENS`` hold ``n`` tokens."""
    return -(-n // TYPED_STEP_TOKENS)


def _fit_above(above: str, tokenize: Tokenize, limit: int, step: int = WINDOW_QUANTUM_LINES,
               drop_lines: int | None = None) -> tuple[list[int], int]:
    """Tokens of ``above`` within ``limit``, dropping whole lines from the front in steps, and
    how many lines were dropped.

    Dropping lines in steps of ``step`` lines (not single tokens) keeps the start of the
    prompt where it was while the user types and adds lines, so the cache keeps it: the
    fewest steps whose lines left fit, found by bisection (a short prompt for a cold cache
    drops dozens of steps, and each try tokenizes what is left).
    ``drop_lines``: drop exactly that many lines instead, whatever the limit.
    """
    if drop_lines is not None:
        return tokenize("".join(above.splitlines(keepends=True)[drop_lines:])), drop_lines
    tokens = tokenize(above)
    if len(tokens) <= limit:
        return tokens, 0
    lines = above.splitlines(keepends=True)
    step = max(1, step)
    low, high = 0, -(-len(lines) // step)  # too few steps; enough (nothing left)
    fitting: list[int] = []  # the tokens left after ``high`` steps
    while high - low > 1:
        mid = (low + high) // 2
        left = tokenize("".join(lines[mid * step :]))
        if len(left) <= limit:
            high, fitting = mid, left
        else:
            low = mid
    return _trim_front(fitting, limit), high * step


LAYOUTS = ("psm", "spm")

DEFAULT_LAYOUT = {"qwen2": "psm"}
"""Measured per model family (``lsp-coder bench fim``): Qwen2.5-Coder collapses in SPM order.
A family not listed gets PSM, which every FIM model is trained on."""


def resolve_layout(setting: str, architecture: str) -> str:
    """``completion.fim_layout``: "auto" picks the measured default for the model family."""
    if setting in LAYOUTS:
        return setting
    return DEFAULT_LAYOUT.get(architecture, "psm")


def _repository(template: FimTemplate, parts: PromptParts, tokenize: Tokenize,
                detokenize: Detokenize, limit: int, head_limit: int | None = None) -> list[int]:
    """Tokens of the other files before the open one (``fim_text.repository``'s layout with
    the model's own separator tokens), the last files left out until they fit ``limit``.

    ``head_limit``: keep only the first that many tokens of the other files, cut after a
    line's end, then the open file's path line: the prompt starts with the same tokens as the
    one with the whole section, so reading that one later reuses them.
    """
    entries = list(parts.extra) if head_limit != 0 else []
    while entries:
        if template.file_sep < 0:
            text = repository(FimText("", "", ""), tuple(entries), parts.repo, parts.path)
            tokens = tokenize(text)
            if head_limit is not None and len(tokens) > head_limit:
                tokens = []  # no separator to cut at: the last files leave instead
        else:
            repo: list[int] = []
            if template.repo_name >= 0 and parts.repo:
                repo = [template.repo_name] + tokenize(f"{parts.repo}\n")
            tokens = list(repo)
            for path, body in entries:
                tokens += [template.file_sep] + tokenize(file_entry(path, body))
            if head_limit is not None and len(tokens) > head_limit:
                tokens = _cut_after_line(tokens, head_limit, detokenize)
                if detokenize(tokens[len(repo):]).count("\n") < 2:
                    tokens = []  # not one line of code after the first file's path
            if tokens and parts.path:
                tokens += [template.file_sep] + tokenize(f"{parts.path}\n")
        if tokens and len(tokens) <= limit:
            return tokens
        entries.pop()
    return []


def _cut_after_line(tokens: list[int], limit: int, detokenize: Detokenize) -> list[int]:
    """The longest start of ``tokens`` within ``limit`` that ends after a newline ([] when
    no line ends within it)."""
    for end in range(min(limit, len(tokens)), 0, -1):
        if "\n" in detokenize(tokens[end - 1 : end]):
            return tokens[:end]
    return []


def build_prompt(template: FimTemplate, parts: PromptParts, tokenize: Tokenize,
                 detokenize: Detokenize, *, prefix_tokens: int, suffix_tokens: int,
                 extra_tokens: int, layout: str = "psm",
                 window_step_lines: int = WINDOW_QUANTUM_LINES,
                 window_drop_lines: int | None = None,
                 extra_head_tokens: int | None = None) -> Prompt:
    """Tokens of the prompt for ``parts``, each piece held to its token budget.

    ``window_step_lines``: the lines above are dropped from the front in steps of this many
    (a short prompt needs a finer step than a full one, or a step may drop most of it).
    ``window_drop_lines``: drop exactly that many, even past the prefix budget (to keep a
    window start the cache holds). ``extra_head_tokens``: only the start of the other files'
    section, that many tokens at most (``_repository``). The open file's import lines, when
    the window starts below them, go at its front within ``1/IMPORTS_SHARE`` of the prefix
    budget; the cursor line's indentation (``PromptParts.cursor_line``) at its end, within
    ``1/INDENT_SHARE`` of it.
    """
    head: list[int] = [template.bos] if template.bos >= 0 else []
    extra = _repository(template, parts, tokenize, detokenize, extra_tokens,
                        extra_head_tokens)
    indent_text, typed_text = parts.cursor_line()
    indent = _indentation(indent_text, tokenize, prefix_tokens // INDENT_SHARE)
    typed = tokenize(typed_text) if typed_text else []
    typed = _trim_front(typed, prefix_tokens)  # a long line of one-token characters
    heal = ""
    if typed:
        heal = detokenize(typed[-1:])
        if not heal or "\ufffd" in heal:
            heal = ""
        else:
            typed = typed[:-1]
    typed_room = max(1, _steps(len(typed))) * TYPED_STEP_TOKENS
    recent = tokenize(parts.recent) if parts.recent else []
    # Stepped like the typed line's room, so an Enter that adds a recent line leaves the room
    # above (and so where the window starts) unchanged most of the time.
    recent_room = _steps(len(recent)) * TYPED_STEP_TOKENS
    if recent_room + typed_room > prefix_tokens:
        recent, recent_room = [], 0  # no room: dropped with the window above them
    typed = recent + typed
    imports = _imports(parts.imports, tokenize, prefix_tokens // IMPORTS_SHARE)
    room = prefix_tokens - typed_room - recent_room - len(imports) - len(indent)
    above, dropped = _fit_above(parts.above, tokenize, max(0, room), window_step_lines,
                                window_drop_lines)
    above = imports + above + indent
    if not template.has_fim:
        return Prompt(head + extra + above + typed, heal, dropped)
    suffix = tokenize(parts.suffix)[:suffix_tokens]
    if layout == "spm":
        body = [template.prefix, template.suffix, *suffix, template.middle,
                *template.prefix_lead, *above]
        return Prompt(head + extra + body + typed, heal, dropped)
    body = [template.prefix, *template.prefix_lead, *above, template.suffix, *suffix,
            template.middle]
    above_at = len(head) + len(extra) + 1 + len(template.prefix_lead) + len(imports)
    return Prompt(head + extra + body + typed, heal, dropped, above_at)


def _imports(text: str, tokenize: Tokenize, limit: int) -> list[int]:
    """Tokens of the open file's import lines (``PromptParts.imports``): the first whole
    lines within ``limit``, counted as ``line_tokens`` does."""
    if not text:
        return []
    tokens = tokenize(text)
    if len(tokens) <= limit:
        return tokens
    lines = text.splitlines(keepends=True)
    kept, used = 0, 0
    for line in lines:
        used += line_tokens(line, tokenize)
        if used > limit:
            break
        kept += 1
    return tokenize("".join(lines[:kept])) if kept else []


def line_tokens(text: str, tokenize: Tokenize) -> int:
    """Tokens of ``text`` counted line by line: the measure ``_imports`` fits the import
    lines by, so text held to it there is kept whole."""
    return sum(len(tokenize(line)) for line in text.splitlines(keepends=True))


def fit_budgets(prefix: int, suffix: int, extra: int, room: int) -> tuple[int, int, int]:
    """Scale the prompt's token budgets down together when they exceed the KV room."""
    total = prefix + suffix + extra
    if total <= room:
        return prefix, suffix, extra
    scale = max(room, 16) / total
    return max(8, int(prefix * scale)), int(suffix * scale), int(extra * scale)
