"""Text positions the handlers need beyond pygls's own document model."""

from __future__ import annotations


def word_start(text: str, line_start: int, offset: int) -> int:
    """Start of the identifier that ends at ``offset`` (``offset`` itself if there is none)."""
    i = offset
    while i > line_start and (text[i - 1].isalnum() or text[i - 1] == "_"):
        i -= 1
    return i
