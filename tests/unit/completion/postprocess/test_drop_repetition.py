"""Tests for the drop_repetition filter."""

import pytest

from lsp_coder.completion.postprocess.drop_repetition import drop_repetition
from tests.unit.completion.postprocess.markers import parse_marked


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        pytest.param(
            "def f():\n    ║├x += 1\n    x += 1\n    x += 1\n    x += 1┤\n",
            "x += 1",
            id="line-three-times",
        ),
        pytest.param(
            "items = [\n    ║├load(a),\n    load(b),\n    load(b),\n"
            "    load(b),\n    load(c),┤\n",
            "load(a),\n    load(b),",
            id="run-after-other-lines",
        ),
        pytest.param(
            "def f(x):\n    ║├y = g(x)\n    log(y)\n    y = g(x)\n    log(y)\n    y = g(x)┤",
            "y = g(x)\n    log(y)",
            id="block-repeated",
        ),
        pytest.param(
            "func f() {\n\t║├a := 1\n\n\tb := 2\n\n\tb := 2\n\n\tc := 3┤\n",
            "a := 1\n\n\tb := 2",
            id="block-with-blank-lines",
        ),
        pytest.param(
            "x = 1\ny = 2\n║├y = 2\nz = 3┤\n",
            "z = 3",
            id="echo-of-previous-line",
        ),
        pytest.param(
            "def f(x):\n    a = 1\n    b = 2\n    ║├a = 1\n    b = 2\n    return a + b┤\n",
            "return a + b",
            id="echo-of-two-lines-moves-indent",
        ),
        pytest.param(
            "    y = compute(x)║├\n    y = compute(x)\n    return y┤\n",
            "\n    return y",
            id="echo-of-cursor-line-after-newline",
        ),
        pytest.param(
            "x = 1\n║├x = 1┤\n",
            "",
            id="only-echo",
        ),
    ],
)
def test_drops_repetition(marked: str, expected: str) -> None:
    ctx, text = parse_marked(marked)
    assert drop_repetition(text, ctx) == expected


@pytest.mark.parametrize(
    "marked",
    [
        pytest.param("x = ║├1┤\n", id="single-line"),
        pytest.param("def f():\n    ║├x += 1\n    x += 1\n    return x┤", id="twice-is-fine"),
        pytest.param(
            "if a:\n    if b:\n        ║├pass\n    }\n    }\n    }┤", id="trivial-lines"
        ),
        pytest.param("const a = {\n  ║├b: {\n    c: [],\n  },\n};┤", id="no-repeat"),
        pytest.param("}\n║├}\n}┤", id="trivial-echo"),
        pytest.param("x = 1\n\n║├x = 1┤", id="echo-needs-adjacent-line"),
        pytest.param("total = 1\nto║├tal = 1┤", id="mid-line-is-not-checked"),
    ],
)
def test_no_repetition_is_unchanged(marked: str) -> None:
    ctx, text = parse_marked(marked)
    assert drop_repetition(text, ctx) == text
