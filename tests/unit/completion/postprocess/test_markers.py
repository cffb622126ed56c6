"""Tests for the ║├┤ marker helper itself."""

import pytest

from lsp_coder.completion.postprocess import FilterContext
from tests.unit.completion.postprocess.markers import parse_marked


def test_cursor_and_suggestion() -> None:
    ctx, text = parse_marked("def f(x):\n    ║├return x┤\n")
    assert ctx == FilterContext(prefix="def f(x):\n    ", suffix="\n", multiline=True)
    assert text == "return x"


def test_cursor_may_be_left_out() -> None:
    ctx, text = parse_marked("a = ├1\nb = 2┤\nc", multiline=False)
    assert ctx == FilterContext(prefix="a = ", suffix="\nc", multiline=False)
    assert text == "1\nb = 2"


def test_cursor_alone_means_empty_suggestion() -> None:
    ctx, text = parse_marked("x = ║y")
    assert (ctx.prefix, ctx.suffix, text) == ("x = ", "y", "")


@pytest.mark.parametrize(
    "marked",
    ["no markers", "a║b║c", "a├b", "a┤b├", "a║b├c┤", "├a┤├b┤"],
)
def test_bad_markers_raise(marked: str) -> None:
    with pytest.raises(ValueError):
        parse_marked(marked)
