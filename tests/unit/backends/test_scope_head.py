"""The lines that open the scopes around the cursor, for a short window that starts below
them."""

from __future__ import annotations

from lsp_coder.backends.scope_head import scope_head

PYTHON = '''import os

class Grid:
    """A grid."""

    def path(self, grid, k):
        """Walk it.
Examples at column 0 of the docstring
        def not_a_scope(x):
        """
        n = len(grid)
        for i in range(n):
            if i:
'''


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_the_enclosing_def_and_class_above_the_window_outermost_first():
    above = lines(PYTHON)
    window = above.index("        n = len(grid)\n")
    # The cursor inside the ``if``: the ``for`` and ``if`` lines are in the window; the
    # docstring's column-0 line starts inside a string (one triple quote below it), so it
    # does not end the walk.
    assert scope_head(above, window, " " * 16, python=True) == (
        "class Grid:\n    def path(self, grid, k):\n")
    no_col0 = [x for x in above if not x.startswith("Examples")]
    window = no_col0.index("        n = len(grid)\n")
    assert scope_head(no_col0, window, " " * 16, python=True) == (
        "class Grid:\n    def path(self, grid, k):\n")
    # The cursor in a docstring: the ``def`` above it still opens its scope.
    in_doc = lines('class A:\n    def f(self):\n        """Walk.\n')
    assert scope_head(in_doc, 3, " " * 8, python=True) == "class A:\n    def f(self):\n"
    # A window that holds the ``def`` needs only the class line; one that holds all: nothing.
    assert scope_head(no_col0, no_col0.index("    def path(self, grid, k):\n"), " " * 8,
                      python=True) == "class Grid:\n"
    assert scope_head(no_col0, 0, " " * 8, python=True) == ""


def test_a_cursor_at_column_0_or_a_block_that_is_no_scope_gets_nothing():
    above = lines("def f(x):\n    for y in x:\n        pass\n")
    assert scope_head(above, 3, "", python=True) == ""
    assert scope_head(above, 3, "        ", python=True) == "def f(x):\n"
    assert scope_head(lines("if x:\n    y = 1\n"), 2, "    ", python=True) == ""


def test_brace_languages_keep_the_lines_that_open_a_block():
    js = lines("export class A {\n  run(a, b) {\n    const x = {\n      k: 1,\n    };\n"
               "    if (a) {\n")
    assert scope_head(js, len(js), "      ", python=False) == (
        "export class A {\n  run(a, b) {\n    if (a) {\n")
    tabs = lines("func (s *S) Run() error {\n\tfor {\n")
    assert scope_head(tabs, 2, "\t\t", python=False) == "func (s *S) Run() error {\n\tfor {\n"


def test_a_last_line_without_its_end_gets_one():
    assert scope_head(["def f():"], 1, "    ", python=True) == "def f():\n"
