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
