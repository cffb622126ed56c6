"""Prompt windows, the multi-line decision and the ring of other files' chunks."""

from __future__ import annotations

from lsp_coder.completion.context import (
    WINDOW_QUANTUM_LINES,
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
