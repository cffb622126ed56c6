"""Tests for the drop_suffix_overlap filter."""

import pytest

from lsp_coder.completion.postprocess.drop_suffix_overlap import drop_suffix_overlap
from tests.unit.completion.postprocess.markers import parse_marked


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        pytest.param('print(║├"hi")┤)\n', '"hi"', id="auto-closed-paren"),
        pytest.param('const s = "║├hello";┤";\n', "hello", id="quote-and-semicolon"),
        pytest.param("x = f(g(║├a))┤))\n", "a", id="two-closers"),
        pytest.param("x = f(g(║├a)┤))\n", "a", id="shorter-than-rest"),
        pytest.param(
            "total = compute(║├self.data)┤data)\n", "self.", id="whole-rest-of-line"
        ),
        pytest.param("if (ok║├) {┤) {\n", "", id="all-duplicated"),
        pytest.param("foo(║├\n  a,\n  b\n)┤)\n", "\n  a,\n  b\n", id="closer-on-own-line"),
    ],
)
def test_drops_rest_of_line(marked: str, expected: str) -> None:
    ctx, text = parse_marked(marked)
    assert drop_suffix_overlap(text, ctx) == expected


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        pytest.param(
            "function f(a) {\n  ║├return a;\n}┤\n}\n",
            "return a;",
            id="auto-closed-brace-below",
        ),
        pytest.param(
            "def f(x):\n    ║├y = x + 1\n    return y\n\ndef g():┤"
            "\n    return y\n\ndef g():\n    pass\n",
            "y = x + 1",
            id="regenerated-code-below",
        ),
        pytest.param(
            "def f(x):\n    ║├y = x + 1\n\n    return y\n    ret┤"
            "\n    return y\n    return x\n",
            "y = x + 1",
            id="last-repeated-line-cut-short",
        ),
        pytest.param(
            "def f(x):║├\n    return x┤\n    return x\n",
            "",
            id="everything-below",
        ),
        pytest.param(
            "foo(║├a)\n}┤)\n}\n",
            "a",
            id="below-then-rest-of-line",
        ),
    ],
)
def test_drops_repeated_lines_below(marked: str, expected: str) -> None:
    ctx, text = parse_marked(marked)
    assert drop_suffix_overlap(text, ctx) == expected


@pytest.mark.parametrize(
    "marked",
    [
        "x = ║├1┤\n",
        "x = f(║├a┤, b)\n",
        "items = [║├1, 2┤3]\n",
        "value = ║├compute()┤ + other()\n",
        "def f():\n    ║├x = 1\n    y = 2┤\n    return y\n",
        "def f():\n    ║├x = 1\n    return┤\n    return x\n",
        "a = 1\n║├b = 2\nfoo()┤foo()\n",
    ],
)
def test_no_overlap_is_unchanged(marked: str) -> None:
    ctx, text = parse_marked(marked)
    assert drop_suffix_overlap(text, ctx) == text
