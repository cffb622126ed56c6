"""What the model sees of the open document: windows around the cursor."""

from __future__ import annotations

import re

from ..prompt_parts import CHARS_PER_TOKEN, WINDOW_QUANTUM_LINES, PromptParts

__all__ = ["CHARS_PER_TOKEN", "cursor_parts", "one_line_end", "split_document",
           "wants_multiline"]

LINE_QUANTUM_CHARS = 1024
"""Within a cursor line too long for the budget, the window's edge moves in steps of this many
characters."""

BLOCK_OPENERS = (":", "{", "(", "[", "=>", "->", " do", " then")

_LONE_CR = re.compile("\r(?!\n)")


def one_line_end(text: str) -> str:
    """``text`` with each lone ``\\r`` line end (LSP allows it) made ``\\n``: one character
    for one, so offsets into ``text`` hold, and the windows, which cut at ``\\n``, fall on the
    same lines as for ``\\n`` or ``\\r\\n`` line ends (a lone-``\\r`` document was one line:
    all of it went after the middle token)."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


def split_document(text: str, offset: int, *, prefix_tokens: int,
                   suffix_tokens: int, recent_lines: int = 0) -> PromptParts:
    """Cut ``text`` around ``offset`` (a str index) into windows within the token budgets.

    ``recent_lines``: the lines above the cursor line back to the last absolute multiple of
    this many lines go to ``recent`` (after the middle token, with the typed line), so Enter
    only appends to the prompt; the suffix is evaluated again once every ``recent_lines``
    lines instead of at every new line. 0: none.
    """
    offset = max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    budget = prefix_tokens * CHARS_PER_TOKEN
    # Only the lines that can fit are split (a big document is not split whole per request);
    # window edges still fall on absolute multiples of WINDOW_QUANTUM_LINES.
    from_ = text.rfind("\n", 0, max(0, line_start - budget - 1)) + 1
    first = text.count("\n", 0, from_)
    above_lines = text[from_:line_start].split("\n")[:-1]
    above_lines = [line + "\n" for line in above_lines]
    start, used = len(above_lines), 0
    while start > 0 and used + len(above_lines[start - 1]) <= budget:
        start -= 1
        used += len(above_lines[start])
    if start + first > 0:
        quantized = -(-(start + first) // WINDOW_QUANTUM_LINES) * WINDOW_QUANTUM_LINES
        start = min(len(above_lines), quantized - first)
    above = "".join(above_lines[start:])

    budget = suffix_tokens * CHARS_PER_TOKEN
    limit = min(len(text), offset + budget + 1)
    below_lines = text[offset:limit].splitlines(keepends=True)
    end, used = 0, 0
    while end < len(below_lines) and used + len(below_lines[end]) <= budget:
        used += len(below_lines[end])
        end += 1
    if end < len(below_lines) or limit < len(text):
        end = max(1, end // WINDOW_QUANTUM_LINES * WINDOW_QUANTUM_LINES)
    suffix = "".join(below_lines[:end])[:budget]  # the cursor line's rest may be too long
    line_prefix = text[line_start:offset]
    limit = prefix_tokens * CHARS_PER_TOKEN
    if len(line_prefix) > limit:  # a very long line: keep the text just before the cursor
        cut = -(-(len(line_prefix) - limit) // LINE_QUANTUM_CHARS) * LINE_QUANTUM_CHARS
        line_prefix, above = line_prefix[cut:], ""
    recent = ""
    if recent_lines > 0 and above:
        kept = above.split("\n")[:-1]
        n = min(len(kept), (first + len(above_lines)) % recent_lines)
        if n:
            cut = len(above) - sum(len(line) + 1 for line in kept[-n:])
            above, recent = above[:cut], above[cut:]
    return PromptParts((), above, line_prefix, suffix, recent)


def cursor_parts(prefix: str, suffix: str) -> PromptParts:
    """Only the cursor's line of the text before (``prefix``) and after (``suffix``) it: what
    ``wants_multiline`` reads, whatever the prompt's budgets."""
    return PromptParts((), "", prefix[prefix.rfind("\n") + 1 :], suffix)


def wants_multiline(parts: PromptParts) -> bool:
    """Multi-line after a block opener or on a blank line; else complete the current line."""
    rest_of_line = parts.suffix.split("\n", 1)[0]
    if rest_of_line.strip():
        return False
    typed = parts.line_prefix.rstrip()
    if not typed:
        return True
    return typed.endswith(BLOCK_OPENERS)
