"""Single-line mode: an answer ends at its line's end, or at the line that closes a bracket
the cursor's line leaves open."""

import pytest

from lsp_coder.completion.answer_rules import one_statement
from lsp_coder.completion.postprocess import POST_CACHE, run
from lsp_coder.completion.postprocess.base import FilterContext
from lsp_coder.completion.postprocess.closer_line import closer_line
from lsp_coder.completion.postprocess.limit_scope import limit_scope
from lsp_coder.completion.postprocess.statement import open_depth, statement_end
from tests.unit.completion.postprocess.markers import parse_marked


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        pytest.param("  const client = new Devi║├ceCodeClient(\n    config,\n    cache,\n  );\n"
                     "  client.run();┤\n}\n",
                     "ceCodeClient(\n    config,\n    cache,\n  );", id="call-over-lines"),
        pytest.param("    total = comp║├ute(a, b)\n    return total┤\n",
                     "ute(a, b)", id="closed-on-its-line"),
        pytest.param("    total = comp║├ute(a,┤)\n", "ute(a,", id="text-after-the-cursor"),
        pytest.param("    print(\"(\" + x║├)\n    y = [┤\n", ")", id="bracket-in-a-string"),
        pytest.param("    return f(a,\n        b║├)\n    y = g(┤\n", ")",
                     id="closes-an-outer-call"),
        pytest.param("    xs = [║├1,\n\n    2]┤\n", "1,", id="blank-line-stops"),
        pytest.param("    xs = [║├1,\n  2]┤\n", "1,", id="less-indented-line-stops"),
        pytest.param("    xs = f(a,║├\n        b)\n    y = 1┤\n", "\n        b)",
                     id="opener-typed-answer-on-the-next-line"),
        pytest.param("    xs = f(║├a, {\n        b: [1,\n            2]})\n    y = 1┤\n",
                     "a, {\n        b: [1,\n            2]})", id="nested"),
    ],
)
def test_single_line_mode_shows_the_statement_to_its_closing_line(marked, expected):
    ctx, text = parse_marked(marked, multiline=False)
    assert limit_scope(text, ctx) == expected


def test_generation_stops_where_the_statement_ends_or_at_max_lines():
    ctx = FilterContext(prefix="def f():\n    x = g", suffix="\n", multiline=False)
    stop = one_statement(ctx, max_lines=8)
    assert stop("(a,") is None
    assert stop("(a,\n        b") is None  # the closing line is not there yet
    text = "(a,\n        b)\n    y = 1\n"
    assert text[: stop(text)] == "(a,\n        b)"
    assert one_statement(ctx, max_lines=2)("(a,\n      b,\n      c)\n") == len("(a,\n      b,")
    assert one_statement(ctx, max_lines=1)("(a,\n  b)\n") == len("(a,")
    assert statement_end(ctx, "(a, b)", 8) is None


def test_open_depth_skips_strings_and_counts_closers():
    assert open_depth("f(a, [1, {") == 3
    assert open_depth("f(')', \"]\", `}`") == 1
    assert open_depth(r"f('\')'") == 1
    assert open_depth("a)]") == -2


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        pytest.param("  c = new Client(║├\n    config,\n    cache,\n  );\n  c.run();┤);\n",
                     "\n    config,\n    cache,\n  ", id="its-own-closer-line"),
        pytest.param("    log(║├\n        'sent %s',\n        n┤)\n",
                     "\n        'sent %s',\n        n\n    ", id="no-closer-written"),
        pytest.param("    log(║├\n        'sent %s', n)\n    y = 1┤)\n",
                     "\n        'sent %s', n\n    ", id="closer-glued"),
        pytest.param("    log(║├'sent %s',\n        n)┤)\n", "'sent %s',",
                     id="first-line-not-blank"),
        pytest.param("    log(║├\n        n)┤) + 1\n", "", id="more-than-closers-after-it"),
        pytest.param("    xs = [║├\n        1,\n    ]┤];\n", "\n        1,\n    ",
                     id="square-bracket-and-semicolon"),
        pytest.param("    g(f(║├\n        a,\n    )\n    y = 1┤))\n", "\n        a,\n    ",
                     id="inner-of-two-closed"),
    ],
)
def test_after_an_opener_the_editor_closed_the_closer_gets_its_own_line(marked, expected):
    ctx, text = parse_marked(marked, multiline=False)
    assert run(POST_CACHE, text, ctx) == expected


def test_closer_line_keeps_crlf_and_leaves_other_answers():
    ctx = FilterContext(prefix="\tf(", suffix=")\r\n", multiline=False)
    assert closer_line("\r\n\t\ta,\r\n\t\tb", ctx) == "\r\n\t\ta,\r\n\t\tb\r\n\t"
    assert closer_line("a, b", ctx) == "a, b"
    assert closer_line("\n\t\ta", FilterContext(prefix="\tf(", suffix="\n")) == "\n\t\ta"
    assert closer_line("\n\t\ta", FilterContext(prefix="\tf(x", suffix=")\n")) == "\n\t\ta"
