"""Tests for the limit_scope filter."""

import pytest

from lsp_coder.completion.postprocess.limit_scope import limit_scope
from tests.unit.completion.postprocess.markers import parse_marked


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        pytest.param(
            "def f(x):\n    ║├y = x * 2\n\n    return y\n\ndef g():\n    pass┤\n",
            "y = x * 2\n\n    return y",
            id="blank-cursor-line-python",
        ),
        pytest.param(
            "def f(x):║├\n    return x\n\n\nprint(f(1))┤\n",
            "\n    return x",
            id="newline-after-colon",
        ),
        pytest.param(
            "class A:\n    def f(self):\n        ║├return 1\n\n"
            "    def g(self):\n        return 2┤",
            "return 1",
            id="method-body",
        ),
        pytest.param(
            "    total = sum(║├xs)\n    return total\nclass B:\n    pass┤",
            "xs)\n    return total",
            id="mid-line-uses-cursor-line-indent",
        ),
        pytest.param(
            "func main() {\n\t║├fmt.Println(1)\n\tfmt.Println(2)\n}\n\nfunc other() {}┤\n",
            "fmt.Println(1)\n\tfmt.Println(2)",
            id="go-tabs",
        ),
        pytest.param(
            "function f(a) {║├\n  return a + 1;\n}\n\nfunction g() {}┤",
            "\n  return a + 1;\n}",
            id="closer-of-block-opened-on-cursor-line-is-kept",
        ),
        pytest.param(
            "  items.forEach((x) => {║├\n    use(x);\n  });\n  done();\n}┤",
            "\n    use(x);\n  });",
            id="closer-with-tail-is-kept",
        ),
        pytest.param(
            "function f(a) {\n  ║├return a;\n}\n\nfunction g() {}┤",
            "return a;",
            id="closer-of-enclosing-block-is-cut",
        ),
    ],
)
def test_cuts_at_dedent(marked: str, expected: str) -> None:
    ctx, text = parse_marked(marked)
    assert limit_scope(text, ctx) == expected


@pytest.mark.parametrize(
    "marked",
    [
        "x = ║├1┤\n",
        "def f(x):\n    ║├if x:\n        return 1\n\n    return 2┤\n",
        "def f(x║├):\n    return x\n\nprint(1)┤",
    ],
)
def test_inside_block_is_unchanged(marked: str) -> None:
    ctx, text = parse_marked(marked)
    assert limit_scope(text, ctx) == text


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        ("def f(x):\n    ║├return x\nprint(1)┤", "return x"),
        ("x = foo(║├a, b)\ny = 2┤", "a, b)"),
        ("def f(x):║├\n    return x┤", ""),
    ],
)
def test_single_line_mode_keeps_first_line(marked: str, expected: str) -> None:
    ctx, text = parse_marked(marked, multiline=False)
    assert limit_scope(text, ctx) == expected
