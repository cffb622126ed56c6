"""Small line helpers shared by the filters (not a filter itself)."""

from __future__ import annotations

TAB_WIDTH = 4
"""Columns a leading tab counts for when indentations are compared."""


def indent_width(line: str) -> int:
    """Returns the width of a line's leading whitespace, a tab counting `TAB_WIDTH` columns."""
    stripped = line.lstrip(" \t")
    return len(line[: len(line) - len(stripped)].expandtabs(TAB_WIDTH))


_CLOSERS = frozenset(")]}")
_CLOSER_TAIL = frozenset(")]};,")


def only_closes(line: str) -> bool:
    """Whether a line only closes brackets, like `}`, `});` or `]`."""
    stripped = line.strip()
    return bool(stripped) and stripped[0] in _CLOSERS and set(stripped) <= _CLOSER_TAIL


def is_blank(line: str) -> bool:
    """Returns whether a line holds only whitespace."""
    return not line.strip()


def drop_trailing_blank(lines: list[str]) -> list[str]:
    """Returns `lines` without its trailing blank lines, always keeping the first line.

    The first line continues the cursor line, so it is kept even when blank: a
    suggestion that starts with a newline must keep that newline.
    """
    end = len(lines)
    while end > 1 and is_blank(lines[end - 1]):
        end -= 1
    return lines[:end]
