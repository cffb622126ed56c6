"""The text around the cursor that postprocessing and the suggestion cache read."""

from __future__ import annotations

FILTER_WINDOW_CHARS = 16_384
"""Postprocessing sees whole lines reaching this far before and after the cursor."""


def rest_of_line(text: str, offset: int) -> str:
    """The cursor line after the cursor, at most ``FILTER_WINDOW_CHARS`` of it (a suggestion
    is shown again only where this is the same)."""
    end = text.find("\n", offset, offset + FILTER_WINDOW_CHARS)
    return text[offset : min(len(text), offset + FILTER_WINDOW_CHARS) if end < 0 else end]


def filter_window(text: str, offset: int) -> tuple[str, str]:
    """The text before and after the cursor that postprocessing reads: whole lines, about
    ``FILTER_WINDOW_CHARS`` each way (at most twice that: a line longer than that is cut). A
    filter compares a suggestion only with the lines next to it, and copying or splitting all
    of a 5 MB document (or of a line of a million characters) would block for tens of ms."""
    reach = 2 * FILTER_WINDOW_CHARS
    start = 0
    if offset > FILTER_WINDOW_CHARS:
        start = text.rfind("\n", max(0, offset - reach), offset - FILTER_WINDOW_CHARS) + 1
        start = start or max(0, offset - reach)
    end = text.find("\n", offset + FILTER_WINDOW_CHARS, offset + reach)
    end = min(len(text), offset + reach) if end < 0 else end
    return text[start:offset], text[offset:end]
