"""The quality floor's items: mid-line spans cut at word boundaries, drawn by a seed."""

from __future__ import annotations

import random

from lsp_coder.bench.floor import summarize
from lsp_coder.bench.floor_spans import cut_span, draw_spans, find_files
from lsp_coder.bench.scoring import edit_similarity, exact, uses_name

CODE = "".join(f"function step{i}(state) {{\n  return state.value + {i} * factor;\n}}\n"
               for i in range(60))


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def test_a_span_is_cut_from_one_line_between_word_boundaries(tmp_path):
    path = tmp_path / "steps.js"
    path.write_text(CODE)
    for seed in range(20):
        span = cut_span(path, "javascript", random.Random(seed))
        assert span is not None
        # putting the span back gives the file
        assert span.text[: span.offset] + span.expected + span.text[span.offset :] == CODE
        assert "\n" not in span.expected and span.expected.strip()
        line_start = span.text.rfind("\n", 0, span.offset) + 1
        before = span.text[line_start : span.offset]
        assert before.strip()  # mid-line: some code stays before the cursor
        after = span.text[span.offset :]
        assert not (_word(before[-1]) and _word(span.expected[0]))
        assert not (_word(span.expected[-1]) and _word(after[0]))


def test_comments_and_docstrings_are_not_drawn(tmp_path):
    c_code = "".join(f"/* a comment that runs\n   over lines {i} and on */\n"
                     f"int value{i} = compute(input, {i}); /* trailing words here */\n"
                     for i in range(80))
    path = tmp_path / "v.c"
    path.write_text(c_code)
    py_code = "".join(f'def f{i}(x):\n    """A docstring line\n    that goes on and on.\n    """\n'
                      f"    return compute(x, {i})  # trailing words here\n" for i in range(80))
    py_path = tmp_path / "v.py"
    py_path.write_text(py_code)
    for seed in range(30):
        c_span = cut_span(path, "c", random.Random(seed))
        py_span = cut_span(py_path, "python", random.Random(seed))
        for span, marker in ((c_span, "/*"), (py_span, "#")):
            line_start = span.text.rfind("\n", 0, span.offset) + 1
            line_end = span.text.find("\n", span.offset)
            line = (span.text[line_start : span.offset] + span.expected
                    + span.text[span.offset : line_end])
            assert line.lstrip().startswith(("int ", "return ")), line
            assert marker not in span.expected and "words" not in span.expected


def test_files_too_small_or_not_text_give_no_span(tmp_path):
    small = tmp_path / "small.py"
    small.write_text("x = 1\n")
    binary = tmp_path / "blob.c"
    binary.write_bytes(b"\xff\xfe" * 2000)
    assert cut_span(small, "python", random.Random(0)) is None
    assert cut_span(binary, "c", random.Random(0)) is None


def test_the_draw_is_seeded_and_takes_one_span_per_file(tmp_path):
    files = []
    for i in range(6):
        path = tmp_path / f"f{i}.js"
        path.write_text(CODE.replace("factor", f"factor{i}"))
        files.append(path)
    first = draw_spans({"javascript": files}, 4, seed=3)
    assert len(first) == 4 and len({s.path for s in first}) == 4
    assert first == draw_spans({"javascript": list(reversed(files))}, 4, seed=3)
    assert first != draw_spans({"javascript": files}, 4, seed=4)


def test_files_are_found_by_language_in_a_stable_order(tmp_path):
    for name in ("b.js", "a.js", "c.min.js", "d.py"):
        (tmp_path / name).write_text("x")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "e.js").write_text("x")
    assert [p.name for p in find_files("javascript", (str(tmp_path),))] == ["a.js", "b.js"]


def test_scores_read_the_first_line():
    assert exact("  total = add(a, b)\n    return total", "total = add(a, b)")
    assert not exact("\ntotal = add(a, b)", "total = add(a, b)")
    assert edit_similarity("total = add(a, b)", "total = add(a, b)") == 100.0
    assert 80 < edit_similarity("total = add(a, c)", "total = add(a, b)") < 100
    assert edit_similarity("", "total") == 0.0
    assert uses_name("x = helpers.scale(y)", "scale")
    assert not uses_name("x = rescale(y)\nscale", "scale")


def test_the_summary_counts_per_language_and_in_total(tmp_path):
    path = tmp_path / "steps.js"
    path.write_text(CODE)
    spans = draw_spans({"javascript": [path]}, 1, seed=0)
    per = summarize(spans, [spans[0].expected])
    assert per["javascript"]["exact"] == 1 and per["total"]["items"] == 1
    assert summarize(spans, ["nothing like it"])["total"]["exact"] == 0
