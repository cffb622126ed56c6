"""Prompt windows, the multi-line decision and the ring of other files' chunks."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from lsp_coder.completion.context import (
    WINDOW_QUANTUM_LINES,
    ExtraContext,
    split_document,
    wants_multiline,
)

DOC = "".join(f"line_{i} = {i}\n" for i in range(200))


def test_windows_cut_at_the_cursor_line():
    offset = DOC.index("line_100") + 4
    parts = split_document(DOC, offset, prefix_tokens=10_000, suffix_tokens=10_000)
    assert parts.above == DOC[: DOC.index("line_100")]
    assert parts.line_prefix == "line"
    assert parts.suffix == DOC[offset:]
    assert parts.prefix + parts.suffix == DOC


def test_window_start_moves_in_steps_so_the_prompt_stays_stable():
    starts = set()
    for line in range(120, 140):
        offset = DOC.index(f"line_{line} ")
        parts = split_document(DOC, offset, prefix_tokens=100, suffix_tokens=50)
        first = int(parts.above.split(" ", 1)[0].removeprefix("line_"))
        assert first % WINDOW_QUANTUM_LINES == 0
        assert len(parts.above) <= 100 * 3
        starts.add(first)
    assert len(starts) <= 3  # 20 lines of typing move the start at most twice


def test_multiline_after_block_openers_and_on_blank_lines():
    def parts(prefix, suffix=""):
        return split_document(prefix + suffix, len(prefix), prefix_tokens=500, suffix_tokens=500)

    assert wants_multiline(parts("def f(x):"))
    assert wants_multiline(parts("if (x) {"))
    assert wants_multiline(parts("def f(x):\n    "))
    assert not wants_multiline(parts("    return x +"))
    assert not wants_multiline(parts("print(", ")\n"))  # mid-line: to the end of the line


def test_extra_context_keeps_files_left_in_a_stable_order():
    ring = ExtraContext(max_chunks=2)
    ring.visit("a", "a.py", "alpha = 1\n", 0)
    ring.visit("b", "b.py", "beta = 2\n", 0)
    ring.visit("a", "a.py", "alpha = 1\n", 0)
    assert ring.chunks("a", 1000) == (("b.py", "beta = 2\n"),)
    ring.visit("c", "c.py", "gamma = 3\n", 0)
    assert [p for p, _ in ring.chunks("c", 1000)] == ["b.py", "a.py"]
    ring.visit("d", "d.py", "delta = 4\n", 0)
    assert [p for p, _ in ring.chunks("d", 1000)] == ["a.py", "c.py"]
    assert ring.chunks("d", 1) == ()


def test_a_closed_file_leaves_the_extra_context():
    ring = ExtraContext(max_chunks=3)
    ring.visit("a", "a.py", "alpha = 1\n", 0)
    ring.visit("b", "b.py", "beta = 2\n", 0)
    ring.forget("a")
    assert ring.chunks("b", 1000) == ()
    ring.forget("b")  # closed while being edited: leaving it later pushes nothing
    ring.visit("c", "c.py", "gamma = 3\n", 0)
    assert ring.chunks("c", 1000) == ()


@given(st.lists(st.text(alphabet="ab \t", max_size=6), max_size=120), st.data())
def test_a_left_file_chunk_is_the_lines_around_the_cursor_on_a_window_step(lines, data):
    text = "\n".join(lines)
    offset = data.draw(st.integers(0, len(text)))
    ring = ExtraContext(max_chunks=1, chunk_lines=40)
    ring.visit("a", "a.py", text, offset)
    ring.visit("b", "b.py", "", 0)
    chunk = ring.chunks("b", 10_000)
    cursor_line = text.count("\n", 0, offset)
    lo = max(0, cursor_line - 20)
    lo -= lo % WINDOW_QUANTUM_LINES
    expected = "".join(re.findall(r"[^\n]*\n|[^\n]+\Z", text)[lo : lo + 40])
    if expected and not expected.endswith("\n"):
        expected += "\n"
    assert chunk == (("a.py", expected),)
