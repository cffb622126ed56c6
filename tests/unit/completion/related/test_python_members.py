"""Python: the names a workspace module the document imports offers after its dot."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_coder.completion.related.python_defs import document_imports
from lsp_coder.completion.related.python_members import ModuleMembers
from lsp_coder.completion.related.python_module_names import MODULE_DUNDERS, module_names


def test_every_top_level_binding_is_a_name_of_the_module():
    source = b'''import os.path, re as regex
from .core import Engine as E, LIMIT
X = Y = 1
a, (b, *c) = 1, (2, 3)
n: int
total += 1
if os.name == "nt":
    def win(): pass
else:
    class Posix: pass
try:
    import fast
except ImportError as missing:
    fast = None
finally:
    DONE = True
for i in range(3):
    pass
with open("f") as handle:
    pass
while (w := 0):
    pass

def setup():
    global CONFIGURED
    local_only = 1

class K:
    attribute = 1
'''
    names = module_names(source)
    assert names is not None
    assert names - MODULE_DUNDERS == {
        "os", "regex", "E", "LIMIT", "X", "Y", "a", "b", "c", "n", "total", "win", "Posix",
        "fast", "missing", "DONE", "i", "handle", "w", "setup", "CONFIGURED", "K"}
    assert "__name__" in names and "local_only" not in names and "attribute" not in names


def test_a_module_whose_names_the_text_cannot_show_offers_none():
    assert module_names(b"from os.path import *\n") is None
    assert module_names(b"def __getattr__(name):\n    return name\n") is None
    assert module_names(b"globals()['x'] = 1\n") is None
    assert module_names(b"import sys\nsys.modules[__name__].x = 1\n") is None
    assert module_names(b"def broken(:\n") is None


def test_imported_modules_offer_their_names_and_a_package_its_submodules(workspace: Path):
    document = workspace / "pkg" / "app.py"
    text = ("import pkg\nimport pkg.core as pc\nfrom pkg import util\nfrom .core import Engine\n"
            "from . import core\nimport os\nx = pc.")
    found = ModuleMembers(262_144).find(document_imports(text, text), document, (workspace,), 0)
    assert set(found) == {"pkg", "pc", "util", "core"}  # Engine is a class, os not ours
    assert found["pc"] == found["core"]
    assert found["pc"] - MODULE_DUNDERS == {"dataclass", "Engine", "scale_value", "LIMIT"}
    assert {"Engine", "core", "util"} <= found["pkg"]  # re-exported and submodules
    assert "text" in found["util"]


def test_a_module_changed_on_disk_offers_its_new_names(workspace: Path):
    document = workspace / "pkg" / "app.py"
    members = ModuleMembers(262_144)
    imported = document_imports("import pkg.core as pc\n", "")
    assert "NEW" not in members.find(imported, document, (workspace,), 0)["pc"]
    core = workspace / "pkg" / "core.py"
    core.write_text(core.read_text() + "NEW = 1\n")
    os.utime(core, (1, 1))  # another time as well as another size
    assert "NEW" in members.find(imported, document, (workspace,), 1)["pc"]
    core.write_text("from os import *\n")
    assert members.find(imported, document, (workspace,), 2) == {}


def test_a_module_too_large_or_refused_offers_none(workspace: Path):
    document = workspace / "pkg" / "app.py"
    imported = document_imports("import pkg.core as pc\n", "")
    assert ModuleMembers(10).find(imported, document, (workspace,), 0) == {}
    refused = ModuleMembers(262_144, allows=lambda path: path.name != "core.py")
    assert refused.find(imported, document, (workspace,), 0) == {}


def test_a_module_open_in_the_editor_also_offers_its_unsaved_names(workspace: Path):
    document = workspace / "pkg" / "app.py"
    core = workspace / "pkg" / "core.py"
    members = ModuleMembers(262_144)
    imported = document_imports("import pkg.core as pc\n", "")
    unsaved = {core: core.read_text() + "\ndef added_in_the_editor():\n    pass\n"}
    found = members.find(imported, document, (workspace,), 0, unsaved)
    assert {"added_in_the_editor", "scale_value"} <= found["pc"]
    assert "added_in_the_editor" not in members.find(imported, document, (workspace,), 0)["pc"]
    # Half typed (a syntax error): its names cannot all be known, so no rule for it.
    broken = {core: core.read_text() + "\ndef half(\n"}
    assert members.find(imported, document, (workspace,), 0, broken) == {}


def look_up(document: Path, key: str, workspace: Path,
            open_texts: dict[Path, str] | None = None) -> frozenset[str] | None:
    return ModuleMembers(262_144).look_up(key, document, (workspace,), 0, open_texts)


def test_an_import_list_offers_its_modules_names(workspace: Path):
    document = workspace / "pkg" / "app.py"
    assert {"Engine", "scale_value"} <= look_up(document, "from pkg.core import", workspace)
    assert {"Engine", "scale_value"} <= look_up(document, "from .core import", workspace)
    assert look_up(document, "from pkg.util import", workspace) == {"text"} | MODULE_DUNDERS
    assert look_up(document, "from .util.text import", workspace) >= {"shout"}
    package = look_up(document, "from . import", workspace)
    assert {"Engine", "core", "util"} <= package  # re-exported, and its submodules
    assert look_up(document, "from os import", workspace) is None  # not the workspace's
    assert look_up(workspace / "pkg" / "core.py", "from .core import", workspace) is None
    # Unsaved names count; a half-typed module's cannot all be known.
    core = workspace / "pkg" / "core.py"
    added = {core: core.read_text() + "\ndef added_in_the_editor():\n    pass\n"}
    assert "added_in_the_editor" in look_up(document, "from .core import", workspace,
                                            open_texts=added)
    half = {core: core.read_text() + "\ndef half(\n"}
    assert look_up(document, "from .core import", workspace, open_texts=half) is None


def test_a_package_path_goes_on_with_its_submodules(workspace: Path):
    document = workspace / "app.py"
    (workspace / "pkg" / "__pycache__").mkdir()  # not a module
    assert look_up(document, "pkg", workspace) == {"core", "util"}
    assert look_up(document, "pkg.util", workspace) == {"text"}
    # A module that is no package, none of the workspace's, or no key of a path.
    assert look_up(document, "pkg.core", workspace) is None
    assert look_up(document, "os", workspace) is None
    assert look_up(document, "pkg.", workspace) is None
    assert look_up(document, "x = pkg", workspace) is None


def test_a_relative_module_path_goes_on_with_a_module_of_its_package(workspace: Path):
    document = workspace / "pkg" / "util" / "text.py"
    assert look_up(document, "from ..", workspace) == {"core", "util"}
    assert look_up(document, "from ..util.", workspace) == set()  # the document alone
    assert look_up(workspace / "pkg" / "core.py", "from .util.", workspace) == {"text"}
    # No such package, a module that is none, above the top package or the workspace.
    assert look_up(document, "from ..nothere.", workspace) is None
    assert look_up(document, "from ..core.", workspace) is None
    assert look_up(document, "from ....", workspace) is None
    assert look_up(workspace / "pkg" / "core.py", "from ..", workspace) is None


def test_no_path_goes_on_to_the_document_itself(workspace: Path):
    document = workspace / "pkg" / "core.py"
    assert look_up(document, "from .", workspace) == {"util"}
    assert "core" not in look_up(document, "from . import", workspace)  # nor a list
    assert "Engine" in look_up(document, "from . import", workspace)  # (its names stay)
    imported = document_imports("import pkg\n", "")
    assert "core" in ModuleMembers(262_144).find(imported, document, (workspace,), 0)["pkg"]
    assert look_up(document, "pkg", workspace) == {"util"}
    assert look_up(workspace / "app.py", "pkg", workspace) == {"core", "util"}


def test_a_package_folder_too_large_offers_no_modules(workspace: Path, monkeypatch):
    from lsp_coder.completion.related import python_module_names

    monkeypatch.setattr(python_module_names, "FOLDER_ENTRIES", 2)
    document = workspace / "pkg" / "core.py"
    assert look_up(document, "from .", workspace) is None
    assert look_up(document, "pkg", workspace) is None


def test_a_package_changed_on_disk_offers_its_new_modules(workspace: Path):
    document = workspace / "app.py"
    members = ModuleMembers(262_144)
    assert members.look_up("pkg", document, (workspace,), 0) == {"core", "util"}
    (workspace / "pkg" / "added.py").write_text("X = 1\n")
    assert members.look_up("pkg", document, (workspace,), 0) == {"core", "util"}  # kept
    assert members.look_up("pkg", document, (workspace,), 1) == {"added", "core", "util"}


def test_a_compiled_module_is_one_of_its_packages_modules(workspace: Path):
    (workspace / "pkg" / "_speedups.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\0ELF")
    (workspace / "pkg" / "notes.txt").write_text("not a module\n")
    assert look_up(workspace / "app.py", "pkg", workspace) == {"_speedups", "core", "util"}


def test_a_package_that_changes_its_path_offers_no_modules(workspace: Path):
    init = workspace / "pkg" / "util" / "__init__.py"
    init.write_text("from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n")
    document = workspace / "pkg" / "core.py"
    assert look_up(document, "pkg.util", workspace) is None  # its modules may be elsewhere
    assert look_up(document, "from .util.", workspace) is None
    assert look_up(document, "from pkg.util import", workspace) is None
    assert look_up(document, "pkg", workspace) == {"util"}  # its parent's are all here
