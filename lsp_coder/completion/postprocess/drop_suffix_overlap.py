"""Filter: drop the end of a suggestion that repeats the text after the cursor."""

from __future__ import annotations

from lsp_coder.completion.postprocess._text import drop_trailing_blank, is_blank
from lsp_coder.completion.postprocess.base import FilterContext

_CLOSING = frozenset(")]}>\"'`;,.: \t")
"""Characters an overlap may consist of when it is not the whole rest of the line."""


def _drop_repeated_lines_below(lines: list[str], below: list[str]) -> list[str]:
    """Cuts the suggestion's last lines when they are the first lines below the cursor line.

    Blank lines are skipped on both sides; lines are compared without trailing
    whitespace but with their indentation. The first suggestion line continues
    the cursor line and is never cut. The last repeated line may be cut short
    (see `_starts`).
    """
    head = [line.rstrip() for line in below if not is_blank(line)]
    for start in range(1, len(lines)):
        if is_blank(lines[start]):
            continue
        tail = [line.rstrip() for line in lines[start:] if not is_blank(line)]
        if _starts(head, tail):
            return drop_trailing_blank(lines[:start])
    return lines


def _starts(head: list[str], tail: list[str]) -> bool:
    """Whether `tail` is the start of `head`.

    With two or more lines, the last one may be cut short (generation stopped
    at the token limit in the middle of a repeated line).
    """
    if len(tail) > len(head):
        return False
    if len(tail) == 1:
        return tail == head[:1]
    return tail[:-1] == head[: len(tail) - 1] and head[len(tail) - 1].startswith(tail[-1])


def _drop_rest_of_line(lines: list[str], rest: str) -> list[str]:
    """Removes the longest end of the last line that starts the rest of the cursor line.

    The overlap must be the whole rest of the line (ignoring trailing
    whitespace) or consist of closing brackets, quotes and punctuation. An
    overlap that is the whole last line of a multi-line suggestion must be
    punctuation: the newline before it would then be trimmed away and glue the
    line above to the rest of the line.
    """
    rest = rest.rstrip()
    last = lines[-1]
    for size in range(min(len(rest), len(last)), 0, -1):
        overlap = rest[:size]
        if not last.endswith(overlap) or not overlap.strip():
            continue
        punctuation = set(overlap) <= _CLOSING
        if size != len(rest) and not punctuation:
            continue
        if len(lines) > 1 and size == len(last) and not punctuation:
            continue
        return lines[:-1] + [last[: len(last) - size]]
    return lines


def drop_suffix_overlap(text: str, ctx: FilterContext) -> str:
    """Drops text that duplicates what already follows the cursor.

    Two cases, applied in this order:

    1. The suggestion's last lines are the first non-blank lines below the
       cursor line (the model re-generated the code below): they are cut.
    2. The suggestion's last line ends with the start of the rest of the cursor
       line (auto-closed brackets and quotes: prefix `print(`, suffix `)`,
       suggestion `"hi")` gives `"hi"`): that end is removed.

    Args:
        text: the suggestion.
        ctx: `suffix` is the document text after the cursor.

    Returns:
        The suggestion without the duplicated end; "" if all of it was.
    """
    rest, _, below = ctx.suffix.partition("\n")
    lines = text.split("\n")
    lines = _drop_repeated_lines_below(lines, below.split("\n"))
    lines = _drop_rest_of_line(lines, rest.rstrip("\r"))
    result = "\n".join(lines)
    if result != text and not result.strip():
        return ""
    return result
