"""The lines around the cursor that choose what the other files' section holds."""

from __future__ import annotations

from .similar import IGNORED
from .text import identifiers

WINDOW_LINES_ABOVE = 20
"""The names used in this many lines above the cursor line (and on its prefix) count."""

WINDOW_LINES_BELOW = 8
"""And those used in this many lines below it."""


def lines_above(text: str, offset: int) -> str:
    """The lines above the cursor line (``WINDOW_LINES_ABOVE``) and its text before the
    cursor."""
    start = offset
    for _ in range(WINDOW_LINES_ABOVE + 1):
        found = text.rfind("\n", 0, start)
        if found < 0:
            start = 0
            break
        start = found
    return text[start:offset]


def lines_between(text: str, offset: int, line: int, first: int, end: int) -> str:
    """Lines ``first`` to ``end`` (exclusive) of ``text``, found from the cursor (``offset``,
    on ``line``) without splitting the whole document."""
    start = text.rfind("\n", 0, offset) + 1
    for _ in range(line - first):
        start = text.rfind("\n", 0, start - 1) + 1
        if start == 0:
            break
    stop = offset
    for _ in range(end - line):
        found = text.find("\n", stop)
        if found < 0:
            return text[start:]
        stop = found + 1
    return text[start:stop]


def lines_by_distance(text: str, offset: int) -> str:
    """The cursor line's text before the cursor, then the lines around it nearest first (one
    above, one below, ...: ``WINDOW_LINES_ABOVE`` above, ``WINDOW_LINES_BELOW`` below), one a
    line: the names the cursor is about to need are most often used on the lines next to it."""
    start = text.rfind("\n", 0, offset) + 1
    out = [text[start:offset]]
    top, bottom = start, text.find("\n", offset)
    for distance in range(max(WINDOW_LINES_ABOVE, WINDOW_LINES_BELOW)):
        if distance < WINDOW_LINES_ABOVE and top > 0:
            first = text.rfind("\n", 0, top - 1) + 1
            out.append(text[first : top - 1])
            top = first
        if distance < WINDOW_LINES_BELOW and bottom >= 0:
            end = text.find("\n", bottom + 1)
            out.append(text[bottom + 1 : len(text) if end < 0 else end])
            bottom = end
    return "\n".join(out)


def distinctive_names(nearby: str) -> list[str]:
    """The distinctive names of ``nearby`` (``lines_by_distance``), in its order."""
    seen: dict[str, None] = {}
    for name in identifiers(nearby):
        if len(name) > 1 and name not in IGNORED:
            seen.setdefault(name, None)
    return list(seen)
