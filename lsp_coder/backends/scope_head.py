"""The lines that open the scopes around the cursor (its function's ``def``, its class), for a
short window above the cursor that starts below them.

The short prompt for a cold cache keeps a few hundred tokens above the cursor; below a long
docstring that leaves out the function's own ``def`` line, and the model answered without its
parameters (``for i in range(n * n):`` for ``for i in range(k):`` in ``def minPath(grid, k):``)
or with a new ``def``. The lines found here go at the window's front, as an editor's sticky
scroll shows them. Found by indentation alone, so a file that does not parse while it is
edited still has them: walking up from the cursor, each line indented less than all below it
encloses the cursor; it is kept when it opens a scope (Python: ``def``/``class``; other
languages: a line ending in ``{``). In Python a line that starts inside a triple-quoted
string (an odd count of triple quotes from it down to the cursor: a docstring's line at
column 0) encloses nothing unless it opens a scope (which keeps the ``def`` above a
docstring the cursor is in).
"""

from __future__ import annotations

import re

PYTHON_SCOPE = re.compile(r"(?:async[ \t]+)?(?:def|class)\b")
"""A Python line (without its indentation) that opens a function or a class."""

TRIPLE_QUOTE = re.compile(r"\"\"\"|'''")
"""Opens or closes a Python string that may span lines."""


def scope_head(lines: list[str], window_start: int, indent: str, python: bool) -> str:
    """The lines of ``lines[:window_start]`` that open the scopes enclosing a cursor line
    indented ``indent`` below ``lines`` (the lines above it, each with its line end),
    outermost first; "" when there are none."""
    width = _width(indent)
    found: list[str] = []
    quotes = 0
    for i in range(len(lines) - 1, -1, -1):  # the prompt's lines above: a few hundred at most
        if width == 0:
            break
        line = lines[i]
        body = line.lstrip(" \t")
        if python:
            quotes += len(TRIPLE_QUOTE.findall(line))
        if not body.strip():
            continue
        line_width = _width(line[: len(line) - len(body)])
        if line_width >= width or (quotes % 2 and not _opens_scope(body, python)):
            continue
        width = line_width
        if i < window_start and _opens_scope(body, python):
            found.append(line if line.endswith("\n") else line + "\n")
    return "".join(reversed(found))


def _width(indent: str) -> int:
    return len(indent.expandtabs(4))


def _opens_scope(body: str, python: bool) -> bool:
    if python:
        return PYTHON_SCOPE.match(body) is not None
    return body.rstrip().endswith("{")
