"""How a suggested line is scored against the line the author wrote."""

from __future__ import annotations

import re


def first_line(suggestion: str) -> str:
    """The suggestion's first line, as the editor shows it at the cursor."""
    return suggestion.split("\n", 1)[0]


def exact(suggestion: str, expected: str) -> bool:
    """The first line equals the expected text (surrounding blanks ignored)."""
    return first_line(suggestion).strip() == expected.strip()


def edit_similarity(suggestion: str, expected: str) -> float:
    """100 x (1 - Levenshtein distance / the longer length) of the first line and the
    expected text, blanks at either end ignored (CrossCodeEval's edit similarity).

    Needs ``rapidfuzz`` (``pip install 'lsp-coder[bench]'``)."""
    from rapidfuzz.distance import Levenshtein

    return 100.0 * Levenshtein.normalized_similarity(first_line(suggestion).strip(),
                                                      expected.strip())


def uses_name(suggestion: str, name: str) -> bool:
    """The first line names ``name`` as a whole identifier."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", first_line(suggestion)) is not None
