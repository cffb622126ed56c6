"""``bench crossfile --recent-edits``: which lines are cases, and a run on the tiny model."""

from __future__ import annotations

import json

from lsp_coder.bench.crossfile_cases import after_module_dot, resolve_source, source_cases
from lsp_coder.bench.recent_edits import rename_cases, renamed
from tests.test_cli import run

UNITS = "SCALE = 3\n\n\ndef scaled(value, factor):\n    return value * factor * SCALE\n"


def package(root):
    pkg = root / "shapes"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "units.py").write_text(UNITS)
    for i in range(3):  # through the module: cases
        (pkg / f"shape{i}.py").write_text(
            f"from . import units\n\n\ndef area{i}(w, h):\n    side = w + {i}\n"
            f"    total = units.scaled(side * h, {i})\n    return total\n")
    # The name imported itself: the import line would show the new name, so not a case.
    (pkg / "direct.py").write_text("from .units import scaled\n\n\ndef f(w):\n"
                                   "    total = scaled(w * 2, 5)\n    return total\n")
    # Named elsewhere in the file: not a case either.
    (pkg / "twice.py").write_text("from . import units\n\n\ndef g(w):\n"
                                  "    total = units.scaled(w * 2, 5)\n"
                                  "    return units.scaled(total, 1)\n")
    return pkg


def test_only_calls_through_the_module_that_name_the_function_once_are_rename_cases(tmp_path):
    source = resolve_source(str(package(tmp_path)))
    found = rename_cases(source, source_cases(source))
    assert sorted(c.path for c, _ in found) == [f"shapes/shape{i}.py" for i in range(3)]
    case, offset = found[0]
    assert UNITS[:offset].endswith("def scaled")
    rename = renamed(case, offset, 1)
    assert rename.new_name == "scaled_checked"
    assert rename.expected == case.expected.replace("units.scaled(", "units.scaled_checked(")
    typed = renamed(after_module_dot(case), offset, 1)  # --after-dot: the rest after "units."
    assert typed.expected == rename.expected.split("units.", 1)[1]


def test_the_recipe_runs_with_and_without_recent_edits_on_the_same_cases(tmp_path, tiny_qwen):
    pkg = package(tmp_path)
    result = run("bench", "crossfile", str(pkg), "--recent-edits", "--cases", "2",
                 "--open-pause-ms", "0", "--tabs", "1", "--model", str(tiny_qwen),
                 "--draft", "none", "--max-tokens", "4", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "2 of 3 rename cases from" in result.stdout
    raw = json.loads((tmp_path / "out" / "recent_edits.json").read_text())
    assert all(c["expected_renamed"].startswith("total = units.scaled_")
               for c in raw["cases"])
    without, with_edits = raw["answers"]["without"], raw["answers"]["with"]
    assert len(without) == len(with_edits) == 2
    # The same prompt and the renamed definition's file entry.
    for a, b in zip(without, with_edits):
        assert b["prompt_tokens"] > a["prompt_tokens"] + 20, (a, b)
    assert "scaled(value, factor)" in (pkg / "units.py").read_text()  # the package untouched
