"""Identifier edges in a document's text (the completion item's range, word highlights)."""

from __future__ import annotations


def is_word_char(char: str) -> bool:
    """Whether ``char`` can be part of an identifier."""
    return char.isalnum() or char == "_"


def word_start(text: str, line_start: int, offset: int) -> int:
    """Start of the identifier that ends at ``offset`` (``offset`` itself if there is none)."""
    i = offset
    while i > line_start and is_word_char(text[i - 1]):
        i -= 1
    return i


def word_end(text: str, offset: int) -> int:
    """End of the identifier that starts at ``offset`` (``offset`` itself if there is none)."""
    i = offset
    while i < len(text) and is_word_char(text[i]):
        i += 1
    return i
