"""bench crossfile's JavaScript and TypeScript cases, the npm packages it finds, the split, and
the oracle's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_coder.bench.crossfile_ask import run_options, with_oracle
from lsp_coder.bench.crossfile_cases import CrossCase, before_name, make_workspace
from lsp_coder.bench.crossfile_draw import select_by_family, spread
from lsp_coder.bench.crossfile_sources import (
    NPM_PREFIX,
    case_languages,
    cases,
    npm_packages,
    oracle,
    resolve,
    side,
    split_sources,
)

UTIL = """'use strict'

function scale (value, factor) {
  return value * factor
}

const LIMIT = 3

module.exports = { scale, LIMIT, kind: 'util' }
"""

MAIN = """const util = require('./util')
const { scale } = require('./util.js')
const path = require('path')

function grow (x) {
  const y = x + 1
  const z = scale(y, 2)
  return util.LIMIT + z
}

const top = scale(1, 2)
"""

SHADOW = """const { scale } = require('./util')

function f (scale) {
  return scale + 1
}
"""

MATH = """export function area(w: number, h: number): number {
  return w * h
}

export const UNIT = 'cm'
"""

SHAPE = """import { area, UNIT as unit } from './math'
import * as m from './math'

export class Shape {
  size(w: number, h: number): string {
    const a = area(w, h)
    if (a > m.UNIT.length) {
      return `${a} ${unit}`
    }
    return String(a)
  }
}
"""


def _package(folder: Path, name: str = "calc") -> Path:
    files = {"package.json": json.dumps({"name": name}), "lib/util.js": UTIL,
             "lib/main.js": MAIN, "lib/shadow.js": SHADOW, "src/math.ts": MATH,
             "src/shape.ts": SHAPE, "src/shape.d.ts": "export declare class Shape {}\n",
             "dist/main.js": MAIN, "dist/util.js": UTIL,
             "node_modules/dep/package.json": json.dumps({"name": "dep"}),
             "node_modules/dep/a.js": MAIN, "node_modules/dep/util.js": UTIL}
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def _cases(folder: Path):
    return {(c.path, c.expected): c for c in cases(resolve(str(folder)))}


def test_commonjs_and_es_imports_give_lines_in_functions(tmp_path):
    got = _cases(_package(tmp_path / "calc"))
    assert sorted(got) == [
        ("calc/lib/main.js", "const z = scale(y, 2)"),
        ("calc/lib/main.js", "return util.LIMIT + z"),
        ("calc/src/shape.ts", "const a = area(w, h)"),
        ("calc/src/shape.ts", "if (a > m.UNIT.length) {"),
        ("calc/src/shape.ts", "return `${a} ${unit}`"),
    ]  # not at top level, not a rebound name, not dist/, node_modules/ or a .d.ts
    limit = got[("calc/lib/main.js", "return util.LIMIT + z")]
    assert (limit.name, limit.defined_in, limit.use_at) == ("LIMIT", "calc/lib/util.js", 7)
    assert limit.language == "javascript"
    lines = limit.text.split("\n")
    assert lines[limit.line] == "  " and limit.text[limit.offset:].startswith("\n}\n")
    assert lines[: limit.line] == MAIN.split("\n")[: limit.line]
    unit = got[("calc/src/shape.ts", "return `${a} ${unit}`")]
    assert (unit.name, unit.defined_in, unit.language) == ("UNIT", "calc/src/math.ts",
                                                           "typescript")


def test_builds_beside_the_sources_give_no_line_twice(tmp_path):
    folder = _package(tmp_path / "calc")
    copy = MAIN.replace("require('./util.js')", "require('./util.cjs')")
    compiled = {"out/shape.js": SHAPE.replace(": number", "").replace(": string", ""),
                "out/math.js": MATH.replace(": number", "")}
    for rel, text in {"edition-old/main.js": copy, "edition-old/util.js": UTIL,
                      "edition-old/util.cjs": UTIL, "lib/twin.js": MAIN, **compiled}.items():
        (folder / rel).parent.mkdir(exist_ok=True)
        (folder / rel).write_text(text)
    got = sorted((c.path, c.expected) for c in cases(resolve(str(folder))))
    assert got == [
        ("calc/lib/main.js", "const z = scale(y, 2)"),
        ("calc/lib/main.js", "return util.LIMIT + z"),
        ("calc/lib/twin.js", "const z = scale(y, 2)"),
        ("calc/lib/twin.js", "return util.LIMIT + z"),
        ("calc/src/shape.ts", "const a = area(w, h)"),
        ("calc/src/shape.ts", "if (a > m.UNIT.length) {"),
        ("calc/src/shape.ts", "return `${a} ${unit}`"),
    ]  # not edition-old/main.js, lib/main.js built with other import paths, nor out/, the
    # JavaScript compiled from src/'s TypeScript; a file of another name that repeats the
    # code (twin.js) is code, not a build


def test_the_cceval_recipe_types_the_line_up_to_the_first_cross_file_name(tmp_path):
    got = _cases(_package(tmp_path / "calc"))
    case = before_name(got[("calc/src/shape.ts", "if (a > m.UNIT.length) {")])
    assert case.expected == "m.UNIT.length) {"
    assert case.text[: case.offset].endswith("    const a = area(w, h)\n    if (a > ")
    assert case.text[case.offset:].startswith("\n      return `${a}")
    scale = before_name(got[("calc/lib/main.js", "const z = scale(y, 2)")])
    assert scale.expected == "scale(y, 2)" and scale.use_at == 0


def test_the_oracle_is_the_defining_files_definition(tmp_path):
    got = _cases(_package(tmp_path / "calc"))
    root = tmp_path / "ws"
    source = resolve(str(tmp_path / "calc"))
    make_workspace(source, got[("calc/lib/main.js", "const z = scale(y, 2)")], root)
    assert not (root / "calc" / "node_modules").exists()  # other packages stay out
    assert oracle(root, got[("calc/lib/main.js", "const z = scale(y, 2)")]) == (
        "function scale (value, factor) {\n  return value * factor\n}\n")
    assert oracle(root, got[("calc/lib/main.js", "return util.LIMIT + z")]) == (
        "const LIMIT = 3\n")
    assert oracle(root, got[("calc/src/shape.ts", "const a = area(w, h)")]).startswith(
        "export function area(w: number, h: number): number {\n")
    options = with_oracle(run_options("all", {}), got[("calc/lib/main.js",
                                                       "return util.LIMIT + z")], root)
    assert options["context"]["pinned"] == ["calc/lib/util.js\nconst LIMIT = 3\n"]
    # 16 + 16 characters (path and text), 2 a token: the sources keep their 512
    assert options["context"]["budget_tokens"] == 512 + 16
    assert run_options("all+oracle", {}) == run_options("all", {})  # the oracle is per case


def test_the_python_oracle_and_the_cceval_recipe(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    # a form feed is no line break to ast: the definition's rows are counted as it counts them
    (pkg / "helpers.py").write_text("LIMIT = 3\n\x0c\n\n@staticmethod\ndef scale(v, f):\n"
                                    "    return v * f\n")
    (pkg / "main.py").write_text("from . import helpers\nfrom .helpers import scale\n\n\n"
                                 "def f(x):\n    if x > helpers.LIMIT:\n        return 1\n"
                                 "    z = 2 + scale(x, 2)\n    return z\n")
    got = {c.expected: c for c in cases(resolve(str(pkg)))}
    header = before_name(got["if x > helpers.LIMIT:"])
    assert header.expected == "helpers.LIMIT:" and header.text[: header.offset].endswith(
        "def f(x):\n    if x > ")
    assert before_name(got["z = 2 + scale(x, 2)"]).expected == "scale(x, 2)"
    assert oracle(tmp_path, got["if x > helpers.LIMIT:"]) == "LIMIT = 3\n"
    assert oracle(tmp_path, got["z = 2 + scale(x, 2)"]) == (
        "@staticmethod\ndef scale(v, f):\n    return v * f\n")


def test_npm_packages_are_found_with_their_bundled_ones_and_split_by_name(tmp_path):
    modules = tmp_path / "lib" / "node_modules"
    _package(modules / "calc")
    _package(modules / "@team" / "shapes", "@team/shapes")
    (modules / "tiny").mkdir()
    (modules / "tiny" / "package.json").write_text(json.dumps({"name": "tiny"}))
    (modules / "tiny" / "index.js").write_text("module.exports = 1\n")  # one file: no imports
    roots = (str(tmp_path / "*" / "node_modules"),)
    found = npm_packages(roots)
    assert list(found) == ["@team/shapes", "calc", "dep"]  # calc's bundled dep too
    assert found["dep"] == modules / "calc" / "node_modules" / "dep"
    assert side("calc") == side("calc") and {side(n) for n in ("a", "b", "c", "d", "e")} == {
        "report", "tune"}
    js, ts, python = case_languages("js"), case_languages("ts"), case_languages("python")
    both = split_sources("report", js, roots) + split_sources("tune", js, roots)
    assert sorted(both) == [NPM_PREFIX + n for n in sorted(found)]
    assert split_sources("report", ts, roots) == split_sources("report", js, roots)
    assert split_sources("report", python, roots)[0] == "asyncio"
    assert not any(n.startswith(NPM_PREFIX) for n in split_sources("report", python, roots))
    source = resolve("npm:@team/shapes", roots)
    assert source.place == Path("@team/shapes")
    with pytest.raises(ValueError):
        resolve("npm:nothing", roots)


def test_languages_name_the_languages_of_the_cases_drawn():
    assert case_languages("python, js") == {"python", "javascript", "typescript"}
    assert case_languages("ts") == {"typescript"}
    with pytest.raises(ValueError, match="'java' is not one of python, js, ts"):
        case_languages("python,java")


def test_cases_are_drawn_per_family_of_languages(tmp_path):
    pool = list(_cases(_package(tmp_path / "calc")).values())
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("def scale(v, f):\n    return v * f\n")
    (pkg / "main.py").write_text("from .helpers import scale\n\n\ndef f(x):\n"
                                 "    z = scale(x, 2)\n    return scale(z, 3)\n")
    pool += cases(resolve(str(pkg)))
    chosen = select_by_family(pool, 2, seed=0, per_file=5)
    assert [c.language == "python" for c in chosen] == [True, False, True, False]


def test_a_familys_languages_are_spread_through_it_in_their_share():
    def case(language: str, n: int) -> CrossCase:
        return CrossCase("pkg", f"m{n}", n, "", 0, "x", "x", "m", language=language)

    drawn = [case("javascript", n) for n in range(6)] + [case("typescript", n)
                                                         for n in range(6, 9)]
    order = [c.language[0] for c in spread(drawn)]
    assert order == list("jtjjtjjtj")
    assert sorted(spread(drawn), key=lambda c: c.line) == drawn  # the same cases
    assert [c.line for c in spread(drawn) if c.language == "javascript"] == list(range(6))


def test_the_npm_packages_of_this_machine_give_cases():
    found = npm_packages()
    if not found:
        pytest.skip("no npm package with JavaScript files under the usual node_modules folders")
    drawn = [c for name in list(found)[:40] for c in cases(resolve(NPM_PREFIX + name))]
    assert drawn, "none of the first 40 npm packages found gave a case"
    assert all(c.expected.strip() and c.language in ("javascript", "typescript")
               for c in drawn)


def test_with_first_use_the_cursor_still_goes_before_the_lines_first_cross_file_name(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("def scale(v, f):\n    return v * f\n\n\nLIMIT = 3\n")
    (pkg / "main.py").write_text("from .helpers import scale, LIMIT\n\n\ndef f(x):\n"
                                 "    z = scale(x, 2)\n    return scale(z, LIMIT)\n")
    [first, second] = cases(resolve(str(pkg)), first_use=True)
    assert (first.name, before_name(first).expected) == ("scale", "scale(x, 2)")
    # the second line's first use is LIMIT, but scale comes first on it
    assert (second.name, before_name(second).expected) == ("LIMIT", "scale(z, LIMIT)")
