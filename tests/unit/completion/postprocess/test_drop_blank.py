"""Tests for the drop_blank filter."""

import pytest

from lsp_coder.completion.postprocess.drop_blank import drop_blank
from tests.unit.completion.postprocess.markers import parse_marked


@pytest.mark.parametrize(
    "marked", ["x = ║├┤", "x = ║├   ┤", "def f():║├\n    \n\t┤\n", "a║├\r\n┤"]
)
def test_blank_is_discarded(marked: str) -> None:
    ctx, text = parse_marked(marked)
    assert drop_blank(text, ctx) == ""


@pytest.mark.parametrize(
    "marked", ["x = ║├1┤", "def f():║├\n    pass┤\n", "a = ║├ b ┤"]
)
def test_text_is_kept(marked: str) -> None:
    ctx, text = parse_marked(marked)
    assert drop_blank(text, ctx) == text
