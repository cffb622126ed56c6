"""Trimming other files' code to a budget: whole lines, nearest the point of interest first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lsp_coder.completion.related.text import display_path, trim_lines, uri_to_path

LINES = st.lists(st.text(alphabet="ab (", max_size=12), max_size=60).map(
    lambda words: [f"{i}:{w}\n" for i, w in enumerate(words)])  # distinct lines


@given(LINES, st.integers(0, 800), st.integers(0, 70))
def test_trimmed_text_is_contiguous_whole_lines_within_the_budget(lines, budget, focus):
    text = "".join(lines)
    kept = trim_lines(text, budget, focus)
    assert len(kept) <= budget
    assert kept in text and (not kept or kept.endswith("\n"))
    start = text.index(kept) if kept else 0
    assert start == 0 or text[start - 1] == "\n"
    if len(text) <= budget:
        assert kept == text
    elif lines and len(lines[min(focus, len(lines) - 1)]) <= budget:
        # The focus line is kept, and no line next to the kept ones would still fit.
        first = text[:start].count("\n")
        last = first + kept.count("\n")
        assert first <= min(focus, len(lines) - 1) < last
        room = budget - len(kept)
        assert (first == 0 or len(lines[first - 1]) > room) or (
            last == len(lines) or len(lines[last]) > room)


def test_a_forty_line_chunk_is_trimmed_around_its_focus_not_dropped():
    text = "".join(f"value_{i} = compute({i})\n" for i in range(40))
    kept = trim_lines(text, 300, focus_line=20)
    assert "value_20 =" in kept and 0 < len(kept) <= 300
    assert "value_0 =" not in kept and "value_39 =" not in kept


def test_paths_from_uris_and_relative_to_the_workspace(tmp_path):
    assert uri_to_path("file:///a%20b/c.py").as_posix() == "/a b/c.py"
    assert uri_to_path("untitled:Untitled-1") is None
    assert display_path(tmp_path / "pkg" / "m.py", (tmp_path,)) == "pkg/m.py"
    assert display_path(tmp_path / "m.py", ()) == "m.py"
