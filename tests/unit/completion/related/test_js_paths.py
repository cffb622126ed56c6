"""JavaScript and TypeScript: the relative paths an import being typed may name."""

from __future__ import annotations

from pathlib import Path

from lsp_coder.completion.related import js_paths
from lsp_coder.completion.related.js_paths import ImportPaths

FILES = ("src/app.ts", "src/util/format.ts", "src/util/index.ts", "src/util/types.d.ts",
         "src/lib/date.js", "src/node_modules/pkg/main.js", "src/.cache/x.ts", "src/notes.md")


def _workspace(root: Path) -> Path:
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root / "src" / "app.ts"


def test_the_paths_below_the_typed_folder_that_name_a_script_or_an_index(tmp_path):
    document = _workspace(tmp_path)
    found = ImportPaths().find("import { f } from './", document, 0)
    assert set(found) == {"import '"}
    paths = found["import '"]
    assert {"./util/format", "./util/format.ts", "./util/format.js", "./util",
            "./util/types", "./util/types.d.ts", "./lib/date", "./lib/date.js"} <= paths
    assert not any("node_modules" in p or ".cache" in p for p in paths)
    assert not {"./app", "./app.ts", "./app.js"} & paths  # the document itself
    assert "./util/types.d" not in paths  # a declaration file by its whole suffix
    assert "./notes.md" in paths  # any file by its whole name (a stylesheet, a JSON file)
    below = ImportPaths().find('const f = require("../lib/', document.parent / "util" / "x.ts",
                               0)
    assert below == {'import "': frozenset({"../lib/date", "../lib/date.js"})}
    # Only ../ steps: the path may climb further, out of what was walked: no rule.
    assert ImportPaths().find("import { f } from '../", document.parent / "util" / "x.ts",
                              0) == {}
    assert ImportPaths().find("import { f } from './util/", document, 0)["import '"] >= {
        "./util/format"}


def test_no_paths_where_none_is_typed_the_folder_is_missing_or_too_large(tmp_path, monkeypatch):
    document = _workspace(tmp_path)
    paths = ImportPaths()
    (tmp_path / "src" / "util" / "new.ts").write_text("")  # the folder's time changes
    assert "./util/new" in paths.find("import { f } from './util/", document, 0)["import '"]
    assert paths.find("import { f } from 'react", document, 0) == {}
    assert paths.find("const x = './", document, 0) == {}  # not an import
    assert paths.find("import { f } from './nowhere/", document, 0) == {}
    monkeypatch.setattr(js_paths, "ENTRIES_MAX", 3)
    assert ImportPaths().find("import { f } from './", document, 0) == {}


def _deeper(root: Path) -> Path:
    _workspace(root)
    for name in ("src/error/NetworkError.ts", "src/net/client/index.ts", "tools/build.js"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    (root / "src" / "util" / "x.ts").write_text("")
    return root / "src" / "util" / "x.ts"


def test_a_path_that_names_no_file_is_mended_to_the_one_file_of_its_name(tmp_path):
    document = _deeper(tmp_path)
    paths, roots = ImportPaths(), (tmp_path,)
    typed = "import { NetworkError } from '../"
    assert paths.mend(typed, "network/NetworkError.js';", document, roots, 0) == (
        "error/NetworkError.js';")
    assert paths.mend(typed, "errors/NetworkError", document, roots, 0) == "error/NetworkError"
    assert paths.mend(typed, "lib/build.js'", document, roots, 0) == "../tools/build.js'"
    assert paths.mend(typed, "x/client'", document, roots, 0) == "net/client'"  # an index
    assert paths.mend(typed, "error/NetworkError.js';", document, roots, 0) is None  # a file
    assert paths.mend(typed, "lib/Missing.js';", document, roots, 0) is None  # no such name
    assert paths.mend(typed, "a/index.ts';", document, roots, 0) is None  # two of that name
    assert paths.mend(typed, "y/x.ts'", document, roots, 0) is None  # the document itself
    assert paths.mend(typed, "zz/NetworkError.js'", document, (), 0) is None  # no root
    # Typed below a folder: only files below it; what is typed is kept.
    assert paths.mend("import { f } from './util/fo", "rm/format.js'",
                      document.parent.parent / "app.ts", roots, 0) == "rmat.js'"
    assert paths.mend("import { f } from './util/t", "ools/build.js'",
                      document.parent.parent / "app.ts", roots, 0) is None
    assert paths.mend("import { f } from './", "date.js'", document.parent.parent / "app.ts",
                      roots, 0) == "lib/date.js'"
    assert paths.mend("const a = '../", "x/NetworkError.js'", document, roots, 0) is None



def test_no_mending_where_a_folder_up_to_the_root_is_too_large(tmp_path, monkeypatch):
    document = _deeper(tmp_path)
    typed, answer = "import { NetworkError } from '../", "network/NetworkError.js';"
    monkeypatch.setattr(js_paths, "ENTRIES_MAX", 14)  # src/ holds 14 entries, the root 17
    assert ImportPaths().mend(typed, answer, document, (tmp_path / "src",), 0)
    assert ImportPaths().mend(typed, answer, document, (tmp_path,), 0) is None
