"""What the next keystroke will need: Enter with an editor's indentation, accept, a new file."""

from __future__ import annotations

from lsp_coder.completion.context import split_document
from lsp_coder.completion.next_prompts import (
    after_answer,
    after_enter,
    document_window,
    indent_unit,
    past_indentation,
)


def enter(text: str, python: bool = True) -> str:
    """The text after Enter at the end of ``text``, with ``|`` at the new cursor."""
    result = after_enter(text, len(text), python=python)
    assert result is not None
    new, offset = result
    return new[:offset] + "|" + new[offset:]


def test_enter_keeps_the_indentation_of_the_line_above():
    assert enter("def f():\n    x = 1") == "def f():\n    x = 1\n    |"


def test_enter_goes_one_level_deeper_after_a_block_opener():
    assert enter("def f():") == "def f():\n    |"
    assert enter("  if (x) {", python=False) == "  if (x) {\n    |"
    assert enter("\tcall(", python=False) == "\tcall(\n\t\t|"
    assert enter("items = [") == "items = [\n    |"


def test_enter_dedents_after_a_python_return_only_in_python():
    assert enter("def f():\n    return 1") == "def f():\n    return 1\n|"
    assert enter("def f():\n    return 1", python=False) == "def f():\n    return 1\n    |"


def test_enter_on_a_blank_auto_indented_line_moves_its_indent_down():
    assert enter("def f():\n    x = 1\n    ") == "def f():\n    x = 1\n\n    |"


def test_no_enter_branch_in_the_middle_of_a_line():
    text = "value = compute(a, b)\n"
    assert after_enter(text, text.index("(")) is None
    assert after_enter(text, text.index("\n")) is not None


def test_indent_unit_is_the_files_most_common_step():
    assert indent_unit("class A:\n  def f(self):\n    pass\n") == "  "
    assert indent_unit("x = 1\n") == "    "
    # A continuation line at 2 is the smallest indentation, not a level.
    text = "def f():\n    x = (1,\n  2)\n    if x:\n        pass\n"
    assert indent_unit(text) == "    "
    assert indent_unit(text, "\t") == "\t"


def test_after_answer_names_enter_then_accept():
    text = "def area(r):\n    return 3.14 * r\n"
    offset = text.index("\n") + 1 + len("    return 3.14")
    kinds = after_answer("file:///a.py", "a.py", text, offset, " * r * r")
    assert [k.kind for k in kinds] == ["accept"]  # mid-line: Enter would split the line
    accepted_text, cursor = kinds[0].state()
    assert accepted_text[:cursor].endswith("3.14 * r * r")
    assert accepted_text[cursor:] == text[offset:]
    at_end = after_answer("file:///a.py", "a.py", "x = 1", 5, "")
    assert [k.kind for k in at_end] == ["enter"]
    shown = after_answer("file:///a.py", "a.py", "x = 1", 5, "\ny = 2")
    assert [k.kind for k in shown] == ["enter", "accept"]
    assert shown[0].state() == ("x = 1\n", 6)
    cold = after_answer("file:///a.py", "a.py", "x = 1", 5, "\ny = 2", cold=True)
    assert [k.kind for k in cold] == ["enter", "accept", "full"]
    assert cold[2].state() == ("x = 1", 5)
    # Nothing typed on the line but its indentation, and the suggestion goes on on it: the
    # line has not started, so the suggestion is more likely accepted than the line ended.
    unstarted = after_answer("file:///a.py", "a.py", "x = 1\n    ", 10, "y = 2\nz = 3")
    assert [k.kind for k in unstarted] == ["accept", "enter"]
    assert unstarted[0].state() == ("x = 1\n    y = 2\nz = 3", 21)
    started = after_answer("file:///a.py", "a.py", "x = 1\n    y", 11, " = 2")
    assert [k.kind for k in started] == ["enter", "accept"]
    blank = after_answer("file:///a.py", "a.py", "x = 1\n    ", 10, "\n    y = 2")
    assert [k.kind for k in blank] == ["enter", "accept"]


def test_document_window_is_shared_by_every_cursor_of_the_first_window():
    text = "".join(f"value_{i} = {i}\n" for i in range(400))
    window = document_window("file:///a.py", "a.py", text, prefix_tokens=200)
    assert 0 < window.offset < len(text) and text[window.offset - 1] == "\n"
    above_window = split_document(text, window.offset, prefix_tokens=200, suffix_tokens=10).above
    assert above_window == text[: window.offset]
    for line in (3, 20, text[: window.offset].count("\n") - 1):
        offset = sum(len(f"value_{i} = {i}\n") for i in range(line))
        above = split_document(text, offset, prefix_tokens=200, suffix_tokens=10).above
        assert above_window.startswith(above)


def past(text: str, remainder: str) -> tuple[str, str]:
    """``past_indentation`` at the end of ``text``: the text with ``|`` at its cursor, and the
    remainder."""
    new, offset, rest = past_indentation(text + "\nbelow()\n", len(text), remainder)
    return new[:offset] + "|" + new[offset:], rest


def test_a_confirm_runs_past_the_indentation_the_suggestion_goes_on_with():
    assert past("def f():\n  ", "  return 1\n") == ("def f():\n    |\nbelow()\n",
                                                     "return 1\n")
    assert past("if x:\n\t", "\tgo()") == ("if x:\n\t\t|\nbelow()\n", "go()")
    assert past("def f():\n", "    x") == ("def f():\n    |\nbelow()\n", "x")


def test_a_confirm_stays_where_the_user_is_unless_indentation_then_code_follows():
    for text, remainder in [("def f():\n    x", "  = 1"),   # code typed on the line
                            ("def f():\n  ", "return 1"),    # no more indentation
                            ("def f():\n  ", "  \n    x"),  # a blank line
                            ("def f():\n  ", "   ")]:        # whitespace alone
        assert past(text, remainder) == (text + "|\nbelow()\n", remainder)
