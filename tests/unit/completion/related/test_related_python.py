"""Python: the definitions of the imported names used at the cursor."""

from __future__ import annotations

from pathlib import Path

from lsp_coder.completion.related.python_defs import (
    PythonDefinitions,
    document_imports,
    imports,
    used_names,
    without_imports,
)


def find(workspace: Path, text: str, name: str = "pkg/app.py", roots=None):
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    used = used_names(without_imports(text))
    return PythonDefinitions(262_144).find(document_imports(text, text), used, path,
                                           (workspace,) if roots is None else roots)


def test_imports_are_read_one_statement_at_a_time_despite_a_broken_line():
    text = ("import os.path as osp\nfrom pkg.core import (Engine,\n    scale_value as sv)\n"
            "from . import util\nx = (\n")
    found = imports(text)
    assert found["osp"].module == "os.path" and found["sv"].attr == "scale_value"
    assert found["Engine"].module == "pkg.core" and found["util"].level == 1
    assert used_names("a = sv(x)\ne.start(1)") == ["a", "sv", "x", "e.start"]


def test_a_class_shows_its_fields_and_method_signatures_not_its_bodies(workspace):
    [found] = find(workspace, "from pkg.core import Engine\n\ne = Engine(")
    assert found.path == workspace / "pkg" / "core.py" and found.name == "Engine"
    assert found.text.startswith("@dataclass\nclass Engine:\n")
    for shown in ('"""Runs jobs."""', "name: str", "speed: int = 3",
                  "def __init__(self, name: str, speed: int = 3) -> None:", '"""Make one."""',
                  "def start(self, when: float) -> bool:"):
        assert shown in found.text
    assert "self.name = name" not in found.text and "More words" not in found.text


def test_aliases_modules_relative_imports_and_reexports_resolve(workspace):
    text = ("from .core import scale_value as sv\nimport pkg.core as pc\nfrom pkg import Engine\n"
            "from pkg.util import text\n\nsv(1)\npc.LIMIT\nEngine\ntext.shout('a')\n")
    found = {d.name: d for d in find(workspace, text)}
    assert set(found) == {"scale_value", "LIMIT", "Engine", "shout"}
    assert found["scale_value"].text == (
        "def scale_value(x: int, *, factor: float = 1.0) -> float:\n"
        '    """Scale x by factor."""\n    ...\n')
    assert found["LIMIT"].text == "LIMIT = 10\n"
    assert found["Engine"].path.name == "core.py"  # followed through pkg/__init__.py


def test_the_package_is_found_from_the_file_without_workspace_folders(workspace):
    [found] = find(workspace, "from pkg.util.text import shout\nshout(", roots=())
    assert found.text.startswith("def shout(s: str) -> str:")


def test_a_syntax_error_in_the_defining_file_falls_back_to_its_readable_definitions(workspace):
    (workspace / "pkg" / "broken.py").write_text(
        "def ok_one(a, b):\n    return a\n\ndef broken(:\n    pass\n")
    [found] = find(workspace, "from pkg.broken import ok_one\nok_one(")
    assert found.text.startswith("def ok_one(a, b):")


def test_unreadable_binary_huge_and_missing_modules_give_nothing(workspace):
    (workspace / "pkg" / "huge.py").write_text("def big():\n    pass\n" + "#" * 300_000)
    (workspace / "pkg" / "blob.py").write_bytes(b"def f():\0\0\0")
    denied = workspace / "pkg" / "denied.py"
    denied.write_text("def hidden():\n    pass\n")
    denied.chmod(0)
    text = ("from pkg.huge import big\nfrom pkg.blob import f\nfrom pkg.gone import g\n"
            "from pkg.denied import hidden\nfrom numpy import array\nbig(); f(); g(); hidden()"
            "; array()\n")
    assert find(workspace, text) == [] or [d.name for d in find(workspace, text)] == ["hidden"]


def test_a_module_used_as_an_object_shows_its_outline_less_the_names_shown_whole(workspace):
    found = find(workspace, "from pkg import core\n\ncore.scale_value(2)\n")
    assert [d.name for d in found] == ["scale_value", ""]
    assert found[1].path == workspace / "pkg" / "core.py"
    assert found[1].text == "class Engine: ...\nLIMIT = 10\n"  # no decorator, no body


def test_a_module_used_whole_shows_only_its_outline(workspace):
    [found] = find(workspace, "import pkg.core as pc\n\nrun(pc)\n")
    assert found.name == "" and found.text == (
        "class Engine: ...\ndef scale_value(x: int, *, factor: float = 1.0) -> float: ...\n"
        "LIMIT = 10\n")


def test_definitions_come_first_then_outlines_the_cursor_lines_module_first(workspace):
    (workspace / "pkg" / "extra.py").write_text("def one(a):\n    pass\n\n\ndef two(b):\n"
                                                "    pass\n")
    text = "from pkg import core, extra\n\nextra.one(1)\nx = core."
    path = workspace / "pkg" / "app.py"
    path.write_text(text)
    nearby = "x = core.\nextra.one(1)"  # the cursor line's prefix first, as lines_by_distance
    found = PythonDefinitions(262_144).find(document_imports(text, text),
                                            used_names(nearby), path, (workspace,))
    assert [(d.path.name, d.name) for d in found] == [
        ("extra.py", "one"), ("core.py", ""), ("extra.py", "")]
    assert found[2].text == "def two(b): ...\n"  # less the name shown whole


def test_an_outline_entry_ends_at_the_definitions_colon():
    from lsp_coder.completion.related.python_render import parse_module

    source = (b"class Handler(Base):\n\n    # why\n    def run(self):\n        pass\n\n\n"
              b"def long_one(a,\n             b):\n    return a\n")
    assert parse_module(source).outline == [
        ("Handler", "class Handler(Base): ...\n"),
        ("long_one", "def long_one(a,\n             b): ...\n")]
