"""The cross-file bench's cases: which lines are blanked, and what the workspace holds."""

from __future__ import annotations

import argparse
import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from lsp_coder.bench.crossfile import _write
from lsp_coder.bench.crossfile_ask import run_options, tabs_for
from lsp_coder.bench.crossfile_cases import (
    CrossCase,
    after_module_dot,
    import_list,
    make_workspace,
    resolve_source,
    select,
    source_cases,
)
from lsp_coder.bench.crossfile_draw import (
    cases_from,
    earlier_cases,
    how_drawn,
    missed_by,
    pooled,
    resumed,
)

HELPERS = '''\
"""Helpers."""

LIMIT = 3


def scale(value, factor):
    return value * factor


class Box:
    def __init__(self, size):
        self.size = size
'''

MAIN = '''\
"""Uses the helpers."""

from . import helpers
from .helpers import Box, scale
from pkg.sub.deep import depth
from os import path


def grow(x):
    y = x + 1
    z = scale(y, 2)
    return scale(z, 3)


def limit(x):
    if x > helpers.LIMIT:
        return path.join("a", "b")
    return depth(
        x)


def pack(n):
    box = Box(n)  # a trailing comment: not a whole-line statement
    return box
'''

DEEP = '''\
def depth(x):
    return x
'''


def _package(root: Path, **extra: str) -> Path:
    pkg = root / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "main.py").write_text(MAIN)
    (pkg / "sub" / "deep.py").write_text(DEEP)
    for name, text in extra.items():
        (pkg / f"{name}.py").write_text(text)
    return pkg


def _cases(pkg: Path, first_use: bool = True) -> dict[tuple[str, str], object]:
    """The cases by (file, name); the first per name unless ``first_use`` is False."""
    cases = {}
    for case in source_cases(resolve_source(str(pkg)), first_use):
        cases.setdefault((case.path, case.name), case)
    return cases


def test_the_first_line_in_a_function_that_uses_a_sibling_name_is_blanked(tmp_path):
    cases = _cases(_package(tmp_path))
    case = cases[("pkg/main.py", "scale")]
    assert case.expected == "z = scale(y, 2)"
    assert case.defined_in == "pkg/helpers.py"
    lines = case.text.split("\n")
    assert lines[case.line] == "    "  # blanked to its indentation
    assert case.text[: case.offset].endswith("y = x + 1\n    ")
    assert case.text[case.offset :].startswith("\n    return scale(z, 3)")
    # only that line changed
    assert MAIN.split("\n")[: case.line] == lines[: case.line]
    assert MAIN.split("\n")[case.line + 1 :] == lines[case.line + 1 :]


def test_a_module_binding_counts_by_its_attribute_and_a_header_line_is_a_case(tmp_path):
    case = _cases(_package(tmp_path))[("pkg/main.py", "LIMIT")]
    assert case.expected == "if x > helpers.LIMIT:"
    assert case.defined_in == "pkg/helpers.py"


def test_lines_that_are_not_whole_statements_or_not_from_the_package_are_not_cases(tmp_path):
    cases = _cases(_package(tmp_path))
    # a statement over two lines, a trailing comment, a name from outside the package
    assert {name for (path, name) in cases if path == "pkg/main.py"} == {"scale", "LIMIT"}


def test_absolute_imports_resolve_and_later_uses_count_unless_first_use(tmp_path):
    user = textwrap.dedent('''\
        from pkg.sub.deep import depth


        def run(x):
            a = depth(x)
            b = depth(a)
            return a + b
        ''')
    pkg = _package(tmp_path, user=user)
    cases = _cases(pkg)
    assert cases[("pkg/user.py", "depth")].expected == "a = depth(x)"
    assert cases[("pkg/user.py", "depth")].defined_in == "pkg/sub/deep.py"
    source = resolve_source(str(pkg))
    every = [c.expected for c in source_cases(source) if c.path == "pkg/user.py"]
    first = [c.expected for c in source_cases(source, True) if c.path == "pkg/user.py"]
    assert every == ["a = depth(x)", "b = depth(a)"] and first == ["a = depth(x)"]


def test_a_name_used_first_at_module_level_gives_no_case(tmp_path):
    top = ("from .helpers import scale\n\nDOUBLE = scale(1, 2)\n\n\n"
           "def f(x):\n    return scale(x, 2)\n")
    pkg = _package(tmp_path, top=top)
    assert not [k for k in _cases(pkg) if k[0] == "pkg/top.py"]
    assert [k for k in _cases(pkg, first_use=False) if k[0] == "pkg/top.py"]


def test_line_numbers_follow_python_not_form_feeds(tmp_path):
    feed = "from .helpers import scale\n\x0c\n\ndef f(x):\n    return scale(x, 2)\n"
    case = _cases(_package(tmp_path, feed=feed))[("pkg/feed.py", "scale")]
    assert case.expected == "return scale(x, 2)"
    assert case.text == "from .helpers import scale\n\x0c\n\ndef f(x):\n    \n"


def test_a_file_that_does_not_parse_is_skipped(tmp_path):
    cases = _cases(_package(tmp_path, broken="from .helpers import scale\ndef f(:\n"))
    assert not [k for k in cases if k[0] == "pkg/broken.py"]
    assert ("pkg/main.py", "scale") in cases


def test_the_workspace_file_holds_the_blanked_buffer_and_nothing_else_changes(tmp_path):
    pkg = _package(tmp_path / "src")
    source = resolve_source(str(pkg))
    case = _cases(pkg)[("pkg/main.py", "scale")]
    root = tmp_path / "ws"
    target = make_workspace(source, case, root)
    assert target == root / "pkg" / "main.py"
    assert target.read_text() == case.text
    assert case.expected not in target.read_text()
    assert (root / "pkg" / "helpers.py").read_text() == HELPERS
    assert (pkg / "main.py").read_text() == MAIN  # the original is untouched


def test_an_installed_package_resolves_to_its_dotted_place():
    source = resolve_source("xml.dom")
    assert source.place == Path("xml/dom")
    assert (source.folder / "minidom.py").is_file()
    with pytest.raises(ValueError):
        resolve_source("no_such_package_here")


def test_selection_is_seeded_and_caps_cases_per_file(tmp_path):
    files = {f"m{i}": "from .helpers import scale, Box\nfrom . import helpers\n\n\ndef f(x):\n"
             "    a = scale(x, 1)\n    b = Box(a)\n    return helpers.LIMIT\n" for i in range(8)}
    pool = source_cases(resolve_source(str(_package(tmp_path, **files))), first_use=True)
    assert len(pool) == 8 * 3 + 2
    first = select(pool, 10, seed=1, per_file=2)
    assert first == select(list(reversed(pool)), 10, seed=1, per_file=2)
    assert len(first) == 10
    per_file = {}
    for case in first:
        per_file[case.path] = per_file.get(case.path, 0) + 1
    assert max(per_file.values()) == 2
    assert select(pool, 10, seed=2, per_file=2) != first


def test_an_earlier_runs_cases_are_found_again_in_its_order(tmp_path):
    files = {f"m{i}": "from .helpers import scale, Box\n\n\ndef f(x):\n"
             "    a = scale(x, 1)\n    return Box(a)\n" for i in range(4)}
    pool = source_cases(resolve_source(str(_package(tmp_path / "a", **files))))
    chosen = select(pool, 5, seed=3, per_file=2)[::-1]
    written = tmp_path / "crossfile.json"
    _write(written, ["pkg"], 3, chosen, [[] for _ in chosen], {}, "5 of 9 asked",
           {"recipe": "cceval", "first_use": False})
    earlier = json.loads(written.read_text())
    assert cases_from(earlier, list(reversed(pool))) == chosen
    assert (earlier["recipe"], earlier["first_use"]) == ("cceval", False)
    # the same package edited since: a listed line is no longer the same case
    edited = _package(tmp_path / "b", **{name: text.replace("scale(x, 1)", "scale(x, 2)")
                                         for name, text in files.items()})
    with pytest.raises(ValueError, match="is not a case here"):
        cases_from(earlier, [replace(c, source=pool[0].source)
                             for c in source_cases(resolve_source(str(edited)))])


def test_a_stopped_run_goes_on_only_from_the_cases_drawn_here_first(tmp_path):
    files = {f"m{i}": "from .helpers import scale, Box\n\n\ndef f(x):\n"
             "    a = scale(x, 1)\n    return Box(a)\n" for i in range(4)}
    pool = source_cases(resolve_source(str(_package(tmp_path, **files))))
    cases = select(pool, 5, seed=3, per_file=2)
    done = {"cases": [{"source": c.source, "path": c.path, "line": c.line, "offset": c.offset,
                       "expected": c.expected} for c in cases[:3]],
            "answers": {"in-file": [{"case": i} for i in range(3)],
                        "all": [{"case": i} for i in range(2)]}}
    # the cases every run finished: a case stopped between its runs is asked again
    assert resumed(done, cases, ["all", "in-file"]) == {
        "in-file": [{"case": 0}, {"case": 1}], "all": [{"case": 0}, {"case": 1}]}
    with pytest.raises(ValueError, match="asked in-file, all, not in-file"):
        resumed(done, cases, ["in-file"])
    with pytest.raises(ValueError, match="not the first drawn here"):
        resumed(done, cases[1:], ["in-file", "all"])
    with pytest.raises(ValueError, match="finished 2 cases, more than the 1 drawn here"):
        resumed(done, cases[:1], ["in-file", "all"])


def _case(line: int, expected: str = "a = scale(x, 1)") -> dict:
    """A case as a run's JSON lists it."""
    return {"source": "pkg", "path": "pkg/m.py", "line": line, "offset": 4,
            "expected": expected}


def test_runs_of_several_seeds_pool_their_finished_cases_once_each():
    seed0 = {"seed": 0, "recipe": "cceval", "cases": [_case(4), _case(9), _case(12)],
             "answers": {"in-file": [{"case": i, "exact": i == 1} for i in range(3)],
                         "all": [{"case": i, "exact": True} for i in range(2)],
                         "all+last": [{"case": 0, "exact": False}]}}
    seed1 = {"seed": 1, "recipe": "cceval", "cases": [_case(9), _case(20), _case(9, "b = 1")],
             "answers": {"in-file": [{"case": i, "exact": False} for i in range(3)],
                         "all": [{"case": i, "exact": i == 2} for i in range(3)]}}
    raw, said = pooled([seed0, seed1])
    # the runs both asked; seed 0's third case lacks "all", seed 1's first was drawn by seed 0
    # (the same place and line: kept once, with seed 0's answers); the same place with
    # another expected line is another case
    assert list(raw["answers"]) == ["in-file", "all"]
    assert [(c["line"], c["expected"]) for c in raw["cases"]] == [
        (4, "a = scale(x, 1)"), (9, "a = scale(x, 1)"), (20, "a = scale(x, 1)"), (9, "b = 1")]
    assert raw["answers"]["in-file"] == [{"case": 0, "exact": False}, {"case": 1, "exact": True},
                                         {"case": 2, "exact": False}, {"case": 3, "exact": False}]
    assert [a["exact"] for a in raw["answers"]["all"]] == [True, True, False, True]
    assert said == ("2 runs pooled (seeds 0, 1, recipe cceval): 4 cases,"
                    " 1 drawn again counted once")
    with pytest.raises(ValueError, match="recipes do not pool: blank, cceval"):
        pooled([seed0, {**seed1, "recipe": "blank"}])
    with pytest.raises(ValueError, match="share no run"):
        pooled([seed0, {**seed1, "answers": {"other": []}}])


def test_several_earlier_runs_give_their_finished_cases_once_each():
    seed3 = {"sources": ["pkg", "other"], "seed": 3, "recipe": "cceval", "filter": "",
             "cases": [_case(4), _case(9), _case(12)],
             "answers": {"in-file": [{}, {}, {}], "all": [{}, {}]}}
    seed4 = {"sources": ["npm:web", "pkg"], "seed": 4, "recipe": "cceval",
             "filter": "3 of 5 asked", "cases": [_case(9), _case(20), _case(9, "b = 1")],
             "answers": {"in-file": [{}, {}, {}]}}
    raw = earlier_cases([seed3, seed4])
    # seed 3's third case lacks "all"; seed 4's first was drawn by seed 3
    assert [(c["line"], c["expected"]) for c in raw["cases"]] == [
        (4, "a = scale(x, 1)"), (9, "a = scale(x, 1)"), (20, "a = scale(x, 1)"), (9, "b = 1")]
    # the packages the cases come from, as first listed ("other" and "npm:web" give none)
    assert raw["sources"] == ["pkg"]
    assert (raw["seed"], raw["recipe"], raw["first_use"], raw["filter"]) == (
        3, "cceval", False, "3 of 5 asked")
    assert earlier_cases([seed4])["cases"] == seed4["cases"]
    # a list of cases written by hand (no runs): all of them
    listed = {k: v for k, v in seed4.items() if k != "answers"}
    assert earlier_cases([listed])["cases"] == seed4["cases"]
    # an old JSON that records no recipe or seed: the defaults apply (how_drawn: blank lines)
    unrecorded = {k: v for k, v in seed4.items() if k not in ("recipe", "seed")}
    assert "recipe" not in earlier_cases([unrecorded]) and "seed" not in earlier_cases(
        [unrecorded])
    with pytest.raises(ValueError, match="recipes do not run together: blank, cceval"):
        earlier_cases([seed3, {**seed4, "recipe": "blank"}])
    with pytest.raises(ValueError, match="--first-use"):
        earlier_cases([seed3, {**seed4, "first_use": True}])


def test_a_filter_run_leaves_the_cases_it_missed_with_their_answers_renumbered():
    raw = {"seed": 0, "recipe": "cceval", "cases": [_case(4), _case(9), _case(12), _case(20)],
           "answers": {"in-file": [{"case": i, "exact": i == 2} for i in range(4)],
                       "all": [{"case": i, "exact": True} for i in range(3)]}}
    # the filter got line 4, missed 12 and (the same place, another line) 9's "b = 1"; it
    # never asked 9 as drawn here; 20 is past what every run of raw finished
    filter_raw = {"cases": [_case(4), _case(9, "b = 1"), _case(12), _case(20)],
                  "answers": {"in-file+full": [{"exact": True}, {"exact": False},
                                               {"exact": False}, {"exact": False}]}}
    kept, said = missed_by(raw, filter_raw)
    assert [c["line"] for c in kept["cases"]] == [12]
    assert kept["answers"] == {"in-file": [{"case": 0, "exact": True}],
                               "all": [{"case": 0, "exact": True}]}
    assert kept["recipe"] == "cceval"
    assert said == ("1 of 3 cases kept, those the filter run missed with the file alone"
                    " (1 it got exactly left out, 1 it did not ask)")
    with pytest.raises(ValueError, match="must ask one run, not in-file, all"):
        missed_by(raw, raw)


def test_a_run_on_an_earlier_runs_cases_draws_them_as_it_did_unless_told():
    def args(recipe=None, first_use=False, after_dot=False):
        return argparse.Namespace(recipe=recipe, first_use=first_use, after_dot=after_dot)
    earlier = {"recipe": "cceval", "first_use": True}
    assert how_drawn(args(), earlier) == {"recipe": "cceval", "first_use": True}
    assert how_drawn(args(recipe="blank"), earlier) == {"recipe": "blank", "first_use": True}
    assert how_drawn(args(after_dot=True), earlier)["recipe"] == "after-dot"
    assert how_drawn(args(), None) == {"recipe": "blank", "first_use": False}
    assert how_drawn(args(), {"cases": []}) == {"recipe": "blank", "first_use": False}


def test_selection_takes_the_sources_in_turn(tmp_path):
    big = {f"m{i}": "from .helpers import scale\n\n\ndef f(x):\n" + "".join(
        f"    a{j} = scale(x, {j})\n" for j in range(5)) for i in range(10)}
    pool = source_cases(resolve_source(str(_package(tmp_path / "a", **big))))
    pool += source_cases(resolve_source(str(_package(tmp_path / "b"))))
    sources = [c.source.rsplit("/", 2)[-2] for c in select(pool, 6, seed=0, per_file=5)]
    # the small package's 3 cases (main.py) are all taken, one in turn with the big one's 50
    assert sum(c.source.endswith("b/pkg") for c in pool) == 3
    assert sources == ["a", "b"] * 3


def test_runs_switch_the_context_sources():
    base = {"completion": {"max_tokens": 48}, "idle": {"cold_prompt_ms": 1500}}
    in_file = run_options("in-file", base)
    assert in_file["context"] == {"definitions": False, "open_files": False,
                                  "workspace": False, "budget_tokens": 0,
                                  "known_members": False}
    assert run_options("workspace", base)["context"] == {
        "definitions": False, "open_files": False, "workspace": True}
    full = run_options("all+full", base)
    assert all(full["context"].values()) and full["idle"]["cold_prompt_ms"] == 0
    assert base["idle"]["cold_prompt_ms"] == 1500  # the base is not changed
    cold = run_options("all+cold128", base)
    assert cold["idle"] == {"cold_prompt_ms": 1500, "cold_context_tokens": 128}
    first = run_options("all+first", base)
    assert first["idle"] == {"cold_prompt_ms": 1500, "cold_context_first": True}
    both = run_options("in-file+full+imports", base)
    assert both["idle"] == {"cold_prompt_ms": 0} and both["context"]["imports"] is True
    assert run_options("all+noimports", base)["context"]["imports"] is False
    recent = run_options("in-file+full+recent0", base)
    assert recent["completion"] == {"max_tokens": 48, "recent_lines": 0}
    assert base["completion"] == {"max_tokens": 48}
    assert run_options("all+full+last", base)["context"]["relevant_last"] is True
    assert "relevant_last" not in run_options("all+full", base)["context"]
    assert run_options("all+full+second", base)["context"]["second_pass"] is True
    assert "second_pass" not in run_options("all+full", base)["context"]
    assert run_options("all+full+unused", base)["context"]["unused_imports"] is True
    assert run_options("all+nounused", base)["context"]["unused_imports"] is False
    assert run_options("all+full+nomembers", base)["context"]["known_members"] is False
    assert "known_members" not in run_options("all+full", base)["context"]  # the default
    assert run_options("in-file+members", base)["context"]["known_members"] is True
    for wrong in ("everything", "all+cold", "all+coldx", "all+warm", "all+full+warm",
                  "all+recent", "all+recentx"):
        with pytest.raises(ValueError):
            run_options(wrong, base)


def test_the_defining_module_is_the_first_tab(tmp_path):
    case = _cases(_package(tmp_path))[("pkg/main.py", "scale")]
    modules = ["pkg/__init__.py", "pkg/helpers.py", "pkg/main.py", "pkg/sub/__init__.py",
               "pkg/sub/deep.py"]
    tabs = tabs_for(case, modules, 2, seed=0)
    assert tabs[0] == "pkg/helpers.py" and len(tabs) == 3
    assert "pkg/main.py" not in tabs and tabs == tabs_for(case, modules, 2, seed=0)


def test_a_local_variable_named_like_an_import_is_not_a_use(tmp_path):
    shadow = ("from . import helpers\nfrom .helpers import scale\n\n\n"
              "def f(helpers, x):\n    return helpers.LIMIT\n\n\n"
              "def g(x):\n    scale = 2\n    return scale * x\n\n\n"
              "def h(x):\n    return helpers.LIMIT + x\n")
    cases = {k: c for k, c in _cases(_package(tmp_path, shadow=shadow)).items()
             if k[0] == "pkg/shadow.py"}
    assert [c.expected for c in cases.values()] == ["return helpers.LIMIT + x"]
    every = [c.expected for c in source_cases(resolve_source(str(tmp_path / "pkg")))
             if c.path == "pkg/shadow.py"]
    assert every == ["return helpers.LIMIT + x"]


def test_a_name_reached_through_its_module_is_typed_up_to_the_dot():
    text = "from . import helpers\n\n\ndef run(x):\n    \n    return y\n"
    offset = text.index("    \n") + 4
    case = CrossCase("pkg", "pkg/app.py", 4, text, offset, "y = helpers.scale(x, 2)", "scale",
                     "pkg/helpers.py")
    typed = after_module_dot(case)
    assert typed is not None
    assert typed.text == text[:offset] + "y = helpers." + text[offset:]
    assert typed.offset == offset + len("y = helpers.") and typed.expected == "scale(x, 2)"
    # Used without its module, or through something the file does not import: no case.
    assert after_module_dot(replace(case, expected="y = scale(x, 2)")) is None
    assert after_module_dot(replace(case, expected="y = self.scale(x, 2)")) is None


def test_the_import_recipe_asks_for_the_list_of_the_statement_that_binds_the_name(tmp_path):
    cases = _cases(_package(tmp_path))
    scale = import_list(cases[("pkg/main.py", "scale")])
    assert scale is not None and scale.expected == " Box, scale"
    assert scale.text == MAIN.replace("from .helpers import Box, scale\n",
                                      "from .helpers import\n")
    assert scale.text[: scale.offset].endswith("from .helpers import") and scale.line == 3
    # ``from . import helpers`` binds helpers, not LIMIT: a use through a module is no case.
    assert import_list(cases[("pkg/main.py", "LIMIT")]) is None
    # ``--recipe import-path``: a relative import typed up to its dots, the rest the answer.
    path = import_list(cases[("pkg/main.py", "scale")], path=True)
    assert path is not None and path.expected == "helpers import Box, scale"
    assert path.text[: path.offset].endswith("\nfrom .") and path.line == 3
    text = "from other.helpers import Box, scale\n\n\ndef f(x):\n    \n"
    other = CrossCase("pkg", "pkg/app.py", 4, text, len(text) - 1, "return scale(x)",
                      "scale", "pkg/helpers.py")
    assert import_list(other) is not None and import_list(other, path=True) is None
    own = replace(other, text=text.replace("other.", "pkg.sub."))
    typed = import_list(own, path=True)  # the file's own top package: typed up to its dot
    assert typed is not None and typed.expected == "sub.helpers import Box, scale"
    assert typed.text[: typed.offset] == "from pkg."


def test_the_import_recipe_in_typescript_types_the_path_up_to_its_folder_steps():
    text = ('import { Logger } from "../logger/Logger.js";\n'
            'import { AuthorityType, other } from "./AuthorityType.js";\n\n'
            "export function kind(): number {\n    \n}\n")
    offset = text.index("    \n") + 4
    case = CrossCase("pkg", "pkg/src/a.ts", 4, text, offset, "return AuthorityType.Default;",
                     "AuthorityType", "pkg/src/AuthorityType.ts", language="typescript")
    typed = import_list(case)
    assert typed is not None and typed.expected == 'AuthorityType.js";'
    assert typed.text[: typed.offset].endswith('import { AuthorityType, other } from "./')
    assert "return AuthorityType.Default;" in typed.text and typed.line == 1
    logger = import_list(replace(case, name="Logger"))
    assert logger is not None and logger.expected == 'logger/Logger.js";'
    assert import_list(replace(case, name="Type")) is None  # a word of another name
