"""bench crossfile's table: each run against in-file only with the same prompt kind."""

from dataclasses import asdict

import pytest

from lsp_coder.bench.crossfile_confidence import confidence, confidence_tables
from lsp_coder.bench.crossfile_report import (
    Answer,
    in_file_run,
    language_tables,
    report_json,
    summarize,
    table,
    without_switch_run,
)


def _summary(exact: int, similarity: float) -> dict[str, float]:
    return summarize([Answer(i, "x", i < exact, similarity, False, 10.0, 100, False)
                      for i in range(4)])


def test_a_run_is_compared_with_in_file_of_the_same_variants():
    runs = dict.fromkeys(("in-file", "in-file+full", "all", "all+full", "definitions+cold64"),
                         {})
    assert in_file_run("all+full", runs) == "in-file+full"
    assert in_file_run("all", runs) == "in-file"
    assert in_file_run("definitions+cold64", runs) == "in-file"  # no in-file+cold64 run
    assert in_file_run("in-file+full", runs) is None
    assert in_file_run("all+full", {"all+full": {}}) is None


def test_a_switched_run_is_also_compared_with_the_run_without_its_last_switch():
    runs = dict.fromkeys(("in-file+full", "all+full", "all+full+last", "all+full+oracle",
                          "all+oracle"), {})
    assert without_switch_run("all+full+last", runs) == "all+full"
    assert without_switch_run("all+full+oracle", runs) == "all+full"
    assert without_switch_run("all+oracle", runs) is None  # no plain "all" run
    assert without_switch_run("all+full", runs) is None  # in-file+full already
    assert without_switch_run("in-file+full", runs) is None


def test_the_table_prints_the_ratio_and_the_edit_similarity_gain():
    text = table({"in-file+full": _summary(2, 40.0), "all+full": _summary(3, 52.5)})
    assert "all+full vs in-file+full: exact x1.50, edit similarity +12.5" in text
    assert "vs in-file+full" not in text.splitlines()[1]


def test_the_table_tells_the_machines_prefill_speed_from_requests_that_read_enough():
    quick = Answer(0, "x", False, 0.0, False, 10.0, 100, False, evaluated_tokens=1000,
                   prefill_ms=11_000.0)
    long = Answer(1, "x", False, 0.0, False, 10.0, 100, False, evaluated_tokens=300,
                  prefill_ms=2_100.0)
    few = Answer(2, "x", False, 0.0, False, 10.0, 100, False, evaluated_tokens=5,
                 prefill_ms=400.0)  # mostly overhead: not counted
    text = table({"full": summarize([quick, long, few]), "warm": summarize([few])})
    assert text.splitlines()[-1] == "prefill on this machine, ms a prompt token: full 10.1"
    assert "prefill" not in table({"old": _summary(2, 40.0)})  # a record without timings


def test_a_stopped_runs_json_is_reported_on_the_cases_every_run_answered():
    cases = [{"expected": "z = scale(y, 2)", "language": "python"},
             {"expected": "const a = area(w, h)", "language": "typescript"}]
    raw = {"cases": cases, "answers": {
        "in-file": [asdict(Answer(0, "z = grow(y)", False, 50.0, False, 1.0, 9, False)),
                    asdict(Answer(1, "x", False, 10.0, False, 1.0, 9, False))],
        "all": [asdict(Answer(0, "z = scale(y, 2)", True, 100.0, True, 1.0, 9, False))]}}
    text = report_json(raw)
    assert "python, 1 cases" in text and "typescript" not in text
    # identifier match scored from the suggestions: 2 of 3 identifiers, then all of them
    assert "66.7 [66.7, 66.7]" in text and "100.0 [100.0, 100.0]" in text
    assert "all vs in-file: exact +100.0 [+100.0, +100.0]" in text
    raw["answers"]["all+last"] = [asdict(Answer(0, "z = grow(y)", False, 50.0, False, 1.0, 9,
                                                False))]
    text = report_json(raw)
    assert "all+last vs in-file: exact +0.0" in text
    assert "all+last vs all: exact -100.0 [-100.0, -100.0]" in text


def test_javascript_and_typescript_get_a_table_together_when_both_are_there():
    def run(exact: list[bool]) -> list[Answer]:
        return [Answer(i, "x", e, 100.0 if e else 0.0, e, 1.0, 9, False)
                for i, e in enumerate(exact)]

    languages = ["python", "javascript", "typescript", "typescript"]
    text = language_tables(languages, {"in-file": run([True, False, True, False]),
                                       "all": run([True, True, True, True])})
    family = text.split("javascript and typescript, 3 cases", 1)[1]
    # one of three exact in-file, three of three with the section: 3x
    assert "all vs in-file: exact +66.7" in family and "exact x3.00" in family
    assert "javascript, 1 cases" in text and "typescript, 2 cases" in text
    alone = language_tables(languages[:3], {"in-file": run([True, False, True])})
    assert "javascript and typescript, 2 cases" in alone
    assert "and typescript" not in language_tables(["python", "typescript"],
                                                   {"in-file": run([True, False])})


def _sure(case: int, exact: bool, probs: list[float | None], line_tokens: int = 0) -> Answer:
    return Answer(case, "x", exact, 100.0 if exact else 40.0, False, 1.0, 9, False,
                  token_probs=probs,
                  first_line_tokens=line_tokens or len(probs))


def test_confidence_is_the_mean_of_the_first_lines_known_tokens():
    assert confidence(_sure(0, True, [0.9, 0.4, 0.8, 0.1], line_tokens=3)) == pytest.approx(0.7)
    assert confidence(_sure(0, True, [None, 0.7, None])) == 0.7
    assert confidence(_sure(0, True, [None, None])) is None
    assert confidence(_sure(0, True, [])) is None


def test_the_tables_hide_the_unsure_and_gate_the_section_on_the_files_answer():
    in_file = [_sure(0, True, [0.95]), _sure(1, False, [0.25]), _sure(2, False, [0.55]),
               _sure(3, True, [0.35])]
    section = [_sure(0, False, [0.9]), _sure(1, True, [0.85]), _sure(2, False, [0.5]),
               _sure(3, False, [0.2])]
    text = confidence_tables({"in-file": in_file, "all": section})
    rows = text.splitlines()
    # at 0.5 in-file shows cases 0 and 2, one of them exact: half of its 2 exact answers kept
    assert ("in-file" + " " * 15 + "      0.5     50%             50%         50%"
            "            70.0    70.0") in rows
    # at 0.9 only case 0 (exact) shows; the three hidden average (40 + 40 + 100) / 3
    assert ("in-file" + " " * 15 + "      0.9     25%            100%         50%"
            "           100.0    60.0") in rows
    assert "all only where in-file is unsure (4 cases; in-file 2 exact, all 1, either 3):" in rows
    # below 0.3: case 1 asked with the section (right there): 3 exact; below 0.6: cases 1, 2
    # and 3, and case 3 goes wrong: 2
    assert "     0.3     25%       3" in rows and "     0.6     75%       2" in rows
    assert "the more confident of the two: 3 exact (both asked)" in text
    assert confidence_tables({"in-file": [_sure(0, True, [None])]}) == ""
