"""``bench crossfile --recent-edits``: which lines are cases, and a run on the tiny model."""

from __future__ import annotations

import ast
import json
import re
import symtable
from dataclasses import replace

import pytest

from lsp_coder.bench.crossfile_cases import after_module_dot, resolve_source, source_cases
from lsp_coder.bench.recent_edit_cases import (
    PARAMETERS,
    caller_names,
    fitting,
    passes,
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
    ("parameter-local", r"total = units\.scaled\(side \* h, \d, w=w\)"),
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


CALLER = """from . import units

LIMIT = 4


def area(w, h, *, self_check=False):
    side = w + 1
    squares = [cell for cell in range(h)]

    def inner(depth):
        return depth

    for row in squares:
        pass
    total = units.scaled(side * h, 2)
    after = total
    return after
"""


def test_a_local_parameter_is_named_after_what_the_caller_has_bound_above_the_line(tmp_path):
    pkg = package(tmp_path)
    (pkg / "shape0.py").write_text(CALLER)
    source = resolve_source(str(pkg))
    found = {c.path: (c, s) for c, s in fitting(source, source_cases(source))}
    case, site = found["shapes/shape0.py"]
    # Nearest first; not the comprehension's, the nested function's, a global or what
    # comes after the line.
    assert caller_names(case) == ["row", "squares", "side", "w", "h", "self_check"]
    edit = with_parameter(case, site, 0, local=True)
    assert edit.new_name == "row"
    assert edit.expected == "total = units.scaled(side * h, 2, row=row)"
    assert edit.alternatives == ("total = units.scaled(side * h, 2, row)",)
    assert site.text[: edit.at] + edit.typed + site.text[edit.at :] == UNITS.replace(
        "factor)", "factor, row)")
    # The call passes side and h already: the next names are squares, then w.
    assert with_parameter(case, site, 1, local=True).new_name == "squares"
    assert with_parameter(case, site, 2, local=True).new_name == "w"
    # Keyword-only after a default: by keyword only.
    (pkg / "units.py").write_text(UNITS.replace("factor)", "factor=2)"))
    source = resolve_source(str(pkg))
    case, site = {c.path: (c, s) for c, s in fitting(source, source_cases(source))}[case.path]
    edit = with_parameter(case, site, 0, local=True)
    assert (edit.typed, edit.alternatives) == (", *, row", ())


def test_no_local_parameter_outside_a_function_nor_one_declared_global(tmp_path):
    pkg = package(tmp_path)
    (pkg / "shape0.py").write_text(CALLER.replace("    side = w + 1\n",
                                                  "    global side\n    side = w + 1\n"))
    source = resolve_source(str(pkg))
    case, site = {c.path: (c, s) for c, s in fitting(source, source_cases(source))}[
        "shapes/shape0.py"]
    assert "side" not in caller_names(case)
    text = "from . import units\n\nside = 3\n\nprint(side)\n"
    top = replace(case, text=text, line=3, offset=text.index("\n\nprint") + 1)
    assert caller_names(top) == []
    assert with_parameter(top, site, 0, local=True) is None
    assert with_parameter(top, site, 0) is not None  # the listed names still fit


@pytest.mark.parametrize("name", ["asyncio", "email"])
def test_local_parameter_cases_of_installed_packages_pass_a_name_the_caller_binds(name):
    source = resolve_source(name)
    built = 0
    for index, (case, site) in enumerate(fitting(source, source_cases(source))):
        edit = with_parameter(case, site, index, local=True)
        if edit is None:
            continue
        built += 1
        text = case.text[: case.offset] + edit.expected + case.text[case.offset :]
        row = case.line + 1
        tree = ast.parse(text)
        caller = min((node for node in ast.walk(tree)
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.lineno < row <= node.end_lineno),
                     key=lambda node: node.end_lineno - node.lineno)
        # As Python's own compiler sees it: a local or parameter of the calling function.
        tables = [symtable.symtable(text, "case", "exec")]
        while tables and not (tables[-1].get_type() == "function"
                              and tables[-1].get_lineno() == caller.lineno):
            tables.extend(tables.pop().get_children())
        symbol = tables[-1].lookup(edit.new_name)
        assert symbol.is_local() or symbol.is_parameter(), (case.path, row, edit.new_name)
        for line in edit.alternatives:  # valid Python: no place after a keyword
            ast.parse(case.text[: case.offset] + line + case.text[case.offset :])
    assert built >= 3


def test_a_line_passes_the_parameter_only_among_the_changed_calls_arguments():
    assert passes("x = helpers.scale(y, limit=limit)", "scale", "limit")
    assert passes("scale(y, limit)", "scale", "limit")
    assert not passes("if limit: x = helpers.scale(y)", "scale", "limit")
    assert not passes("x = helpers.scale(y, self.limit)\nscale(limit)", "scale", "limit")
    assert not passes("total = scale(y) + clamp(limit)", "scale", "limit")
    assert passes("total = scale(clamp(y), limit) + 1", "scale", "limit")
    assert passes("total = scale(y, [limit]", "scale", "limit")  # not closed on the line
    assert passes("a = other(x) or scale(y, limit=limit)", "scale", "limit")
    assert passes('f = scale(")", limit)', "scale", "limit")  # a bracket in a string
