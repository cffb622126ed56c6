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


JS_KEYWORDS = frozenset("""
    break case catch class const continue debugger default delete do else export extends false
    finally for function if import in instanceof let new null of return static super switch this
    throw true try typeof undefined var void while with yield async await as from interface type
    enum implements private protected public readonly declare namespace abstract keyof
    """.split())

_STRINGS_AND_COMMENTS = re.compile(
    r"""'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|`(?:\\.|[^`\\])*`?|#.*|//.*|/\*.*?(?:\*/|$)""")
_IDENTIFIER = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*")


def identifiers(code: str, language: str) -> list[str]:
    """The identifiers of a line of code in order, without keywords, string literals and
    comments (``#`` starts one in Python only)."""
    import keyword

    if language == "python":
        keywords = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
        code = _STRINGS_AND_COMMENTS.sub(
            lambda m: " " if not m.group().startswith("//") else m.group(), code)
    else:
        keywords = JS_KEYWORDS
        code = _STRINGS_AND_COMMENTS.sub(
            lambda m: m.group() if m.group().startswith("#") else " ", code)
    return [name for name in _IDENTIFIER.findall(code) if name not in keywords]


def identifier_match(suggestion: str, expected: str, language: str) -> tuple[bool, float]:
    """CrossCodeEval's identifier match of the first line against the expected text: whether
    the identifiers are the same in the same order, and their F1 (0-100; both empty: 100)."""
    from collections import Counter

    got = identifiers(first_line(suggestion), language)
    want = identifiers(expected, language)
    if not got or not want:
        return got == want, 100.0 if got == want else 0.0
    common = sum((Counter(got) & Counter(want)).values())
    if not common:
        return False, 0.0
    precision, recall = common / len(got), common / len(want)
    return got == want, 100.0 * 2 * precision * recall / (precision + recall)
