"""``bench crossfile --recent-edits``: which lines are cases, and a run on the tiny model."""

from __future__ import annotations

import ast
import json
import re

import pytest

from lsp_coder.bench.crossfile_cases import after_module_dot, resolve_source, source_cases
from lsp_coder.bench.recent_edit_cases import (
    PARAMETERS,
    fitting,
    rename_cases,
    renamed,
    with_parameter,
)
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
    assert (rename.at, rename.typed) == (offset, "_checked")
    assert rename.expected == case.expected.replace("units.scaled(", "units.scaled_checked(")
    typed = renamed(after_module_dot(case), offset, 1)  # --after-dot: the rest after "units."
    assert typed.expected == rename.expected.split("units.", 1)[1]


@pytest.mark.parametrize(("edit", "expected"), [
    ("rename", r"total = units\.scaled_\w+\(side \* h, \d\)"),
    ("parameter", r"total = units\.scaled\(side \* h, \d, (\w+)=\1\)"),
])
def test_the_recipe_runs_with_and_without_recent_edits_on_the_same_cases(tmp_path, tiny_qwen,
                                                                         edit, expected):
    pkg = package(tmp_path)
    result = run("bench", "crossfile", str(pkg), "--recent-edits", "--edit", edit,
                 "--cases", "2", "--open-pause-ms", "0", "--tabs", "1", "--model",
                 str(tiny_qwen), "--draft", "none", "--max-tokens", "4", "--out",
                 str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert f"2 of 3 {edit} cases from" in result.stdout
    raw = json.loads((tmp_path / "out" / "recent_edits.json").read_text())
    assert raw["edit"] == edit
    assert all(re.fullmatch(expected, c["expected_edited"]) for c in raw["cases"]), raw["cases"]
    without, with_edits = raw["answers"]["without"], raw["answers"]["with"]
    assert len(without) == len(with_edits) == 2
    # The same prompt and the edited definition's file entry.
    for a, b in zip(without, with_edits):
        assert b["prompt_tokens"] > a["prompt_tokens"] + 20, (a, b)
    assert "scaled(value, factor)" in (pkg / "units.py").read_text()  # the package untouched


SIGNATURES = {  # the def line -> the def line with the new parameter typed in
    "def scaled(value, factor):": "def scaled(value, factor, strict):",
    "def scaled():": "def scaled(strict):",
    "def scaled(value, factor=2):": "def scaled(value, factor=2, *, strict):",
    "def scaled(value, *rest, factor=2):": "def scaled(value, *rest, factor=2, strict):",
    "def scaled(value, /, factor):": "def scaled(value, /, factor, strict):",
    "def scaled(value: dict[str, int] = {}) -> int:":
        "def scaled(value: dict[str, int] = {}, *, strict) -> int:",
    "def scaled(\n    value,  # (a)\n    factor,\n):":
        "def scaled(\n    value,  # (a)\n    factor, strict\n):",
}


@pytest.mark.parametrize("signature", SIGNATURES)
def test_a_new_parameter_is_typed_last_in_the_signature_and_passed_by_keyword(tmp_path,
                                                                            signature):
    pkg = package(tmp_path)
    (pkg / "units.py").write_text(UNITS.replace("def scaled(value, factor):", signature))
    source = resolve_source(str(pkg))
    found = sorted(fitting(source, source_cases(source)), key=lambda f: f[0].path)
    case, site = found[0]
    edit = with_parameter(case, site, 0)
    assert edit.new_name == "strict"
    assert site.text[: edit.at] + edit.typed + site.text[edit.at :] == (
        UNITS.replace("def scaled(value, factor):", SIGNATURES[signature]))
    assert edit.expected == case.expected.replace(", 0)", ", 0, strict=strict)")
    typed = with_parameter(after_module_dot(case), site, 0)  # --after-dot: the rest of it
    assert typed.expected == edit.expected.split("units.", 1)[1]
    assert with_parameter(case, site, 1).new_name == PARAMETERS[1]


def test_no_parameter_case_for_kwargs_an_open_call_or_a_name_already_used(tmp_path):
    pkg = package(tmp_path)
    (pkg / "units.py").write_text(UNITS.replace("factor)", "**options)"))
    (pkg / "shape0.py").write_text(
        "from . import units\n\n\ndef area(w, h, strict):\n"
        "    total = units.scaled(w, h)\n    return total\n")
    (pkg / "shape1.py").write_text(
        "from . import units\n\n\ndef area(w, h):\n    total = units.scaled(w,\n"
        "                         h)\n    return total\n")
    source = resolve_source(str(pkg))
    assert all(with_parameter(c, s, 0) is None for c, s in fitting(source, source_cases(source)))
    (pkg / "units.py").write_text(UNITS)
    source = resolve_source(str(pkg))
    found = {c.path: with_parameter(c, s, 0) for c, s in fitting(source, source_cases(source))}
    assert found["shapes/shape0.py"].new_name == "trace_id"  # "strict" is the file's own
    assert found["shapes/shape0.py"].expected == "total = units.scaled(w, h, trace_id=trace_id)"
    assert "shapes/shape1.py" not in found  # the call goes on past its line: no case


@pytest.mark.parametrize("name", ["asyncio", "email", "multiprocessing"])
def test_parameter_cases_of_installed_packages_parse_with_the_parameter_required(name):
    source = resolve_source(name)
    built = 0
    for index, (case, site) in enumerate(fitting(source, source_cases(source))):
        edit = with_parameter(case, site, index)
        if edit is None:
            continue
        built += 1
        defining = ast.parse(site.text[: edit.at] + edit.typed + site.text[edit.at :])
        def_line = site.text.count("\n", 0, site.name_end) + 1
        function = next(node for node in ast.walk(defining)
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and node.lineno == def_line)
        assert function.name == case.name
        args = function.args
        if edit.new_name in [a.arg for a in args.kwonlyargs]:
            at = [a.arg for a in args.kwonlyargs].index(edit.new_name)
            assert args.kw_defaults[at] is None  # required
        else:
            assert [a.arg for a in args.posonlyargs + args.args][-1] == edit.new_name
        line = case.text[: case.offset] + edit.expected + case.text[case.offset :]
        calls = [node for node in ast.walk(ast.parse(line)) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and node.func.attr == case.name]
        assert any(k.arg == edit.new_name and isinstance(k.value, ast.Name)
                   and k.value.id == edit.new_name for call in calls for k in call.keywords)
    assert built >= 3
