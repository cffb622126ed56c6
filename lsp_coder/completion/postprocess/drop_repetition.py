"""Filter: drop lines the model repeats, from the prefix or from the suggestion itself."""

from __future__ import annotations

from lsp_coder.completion.postprocess._text import drop_trailing_blank, is_blank
from lsp_coder.completion.postprocess.base import FilterContext

_MIN_LINE_RUN = 3
"""A single line repeated this many times in a row is a generation loop."""
_BRACKETS = frozenset("()[]{}<>;, \t")


def _is_trivial(line: str) -> bool:
    """Whether a line is too short or too plain (`}`, `});`) to count as a repetition."""
    stripped = line.strip()
    return len(stripped) < 2 or set(stripped) <= _BRACKETS


def _first_repeat(keys: list[str]) -> int | None:
    """Returns the index where the first repeated copy starts (the cut), or None.

    A repetition is a non-trivial line repeated `_MIN_LINE_RUN` times in a row,
    or a block of two or more lines, at least one non-trivial, that is
    immediately repeated. The first occurrence is kept.
    """
    n = len(keys)
    for i in range(n):
        run = keys[i : i + _MIN_LINE_RUN]
        if len(run) == _MIN_LINE_RUN and len(set(run)) == 1 and not _is_trivial(run[0]):
            return i + 1
        for size in range(2, (n - i) // 2 + 1):
            block = keys[i : i + size]
            if block == keys[i + size : i + 2 * size] and not all(map(_is_trivial, block)):
                return i + size
    return None


def _drop_prefix_echo(text: str, prefix: str) -> str:
    """Drops leading suggestion lines that repeat the lines just before the cursor.

    Only for a suggestion that starts a new line: either the cursor line is
    blank (its indentation is then moved onto the next kept line), or the
    suggestion starts with a newline (the cursor line is then compared too).
    """
    lines = text.split("\n")
    prefix_lines = prefix.split("\n")
    cursor_line = prefix_lines[-1]
    if is_blank(cursor_line):
        own, previous, keep = [cursor_line + lines[0]] + lines[1:], prefix_lines[:-1], []
    elif len(lines) > 1 and is_blank(lines[0]):
        own, previous, keep = lines[1:], prefix_lines, [lines[0]]
    else:
        return text
    echo = 0
    for size in range(1, min(len(own), len(previous)) + 1):
        mine = [line.strip() for line in own[:size]]
        theirs = [line.strip() for line in previous[-size:]]
        if mine == theirs and not all(map(_is_trivial, mine)):
            echo = size
    if not echo:
        return text
    rest = own[echo:]
    if all(map(is_blank, rest)):
        return ""
    if not keep:
        # The first kept line goes right after the cursor line's indentation.
        rest = rest[next(i for i, line in enumerate(rest) if not is_blank(line)) :]
        if not rest[0].startswith(cursor_line):
            return text
        rest = [rest[0][len(cursor_line) :]] + rest[1:]
    return "\n".join(keep + rest)


def drop_repetition(text: str, ctx: FilterContext) -> str:
    """Drops repeated lines and blocks.

    First, leading lines that repeat the last line(s) of the prefix verbatim
    (ignoring surrounding whitespace) are dropped. Then the suggestion is cut at
    the first repetition: a non-trivial line repeated three times in a row, or
    a block of lines immediately repeated; the first occurrence stays.
    Trivial lines (under two characters, or only brackets) never count alone.

    Args:
        text: the suggestion.
        ctx: `prefix` gives the lines before the cursor.

    Returns:
        The suggestion without repetitions; "" if it only repeated the prefix.
    """
    text = _drop_prefix_echo(text, ctx.prefix)
    lines = text.split("\n")
    cut = _first_repeat([line.strip() for line in lines])
    if cut is None:
        return text
    return "\n".join(drop_trailing_blank(lines[:cut]))
