"""Tests for the trim_trailing_whitespace filter."""

import pytest

from lsp_coder.completion.postprocess.trim_trailing_whitespace import trim_trailing_whitespace
from tests.unit.completion.postprocess.markers import parse_marked


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        ("x = ║├1   ┤\n", "1"),
        ("def f(x):\n    ║├y = x \t\n    return y\t┤\n", "y = x\n    return y"),
        ("def f(x):║├\n    return x\n\n   \n┤", "\n    return x"),
        ("if x:║├  \n    pass┤", "\n    pass"),
        ("a = [║├1,  \r\n  2,  \r\n]\r\n┤", "1,\r\n  2,\r\n]"),
        ("x = ║├   \n\t\n┤", ""),
        ("x = ║├┤", ""),
    ],
)
def test_trims(marked: str, expected: str) -> None:
    ctx, text = parse_marked(marked)
    assert trim_trailing_whitespace(text, ctx) == expected


def test_clean_text_is_unchanged() -> None:
    ctx, text = parse_marked("def f(x):\n    ║├if x:\n\n        return 1┤\n")
    assert trim_trailing_whitespace(text, ctx) == text
