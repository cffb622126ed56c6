"""Python: the names a workspace module the document imports offers after its dot."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_coder.completion.related.python_defs import document_imports
from lsp_coder.completion.related.python_members import (
    MODULE_DUNDERS,
    ModuleMembers,
    module_names,
)


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


def test_a_line_that_starts_an_import_list_offers_its_module_names(workspace: Path):
    document = workspace / "pkg" / "app.py"
    members = ModuleMembers(262_144)
    for line, key in (("from pkg.core import ", "from pkg.core import"),
                      ("    from .core import Eng", "from .core import"),
                      ("from . import", "from . import")):
        found = members.find(document_imports(line, line), document, (workspace,), 0,
                             line_before=line)
        assert key in found, line
    assert "Engine" in found["from . import"]  # re-exported by the package
    assert {"core", "util"} <= found["from . import"]  # and its submodules
    assert members.find({}, document, (workspace,), 0, line_before="from os import ") == {}
    assert members.find({}, document, (workspace,), 0, line_before="x = 1  # from pkg import") == {}


def test_a_module_path_being_written_goes_on_with_a_submodule(workspace: Path):
    document = workspace / "app.py"
    (workspace / "pkg" / "__pycache__").mkdir()  # not a module
    members = ModuleMembers(262_144)
    for line in ("from pkg.", "import pkg.u", "    from pkg.util."):
        found = members.find({}, document, (workspace,), 0, line_before=line)
        package = line.strip().split()[1].rsplit(".", 1)[0]
        assert {k for k in found if not k.endswith(" import")} == {package}, line
    assert members.find({}, document, (workspace,), 0, line_before="from pkg.")["pkg"] == {
        "core", "util"}
    assert members.find({}, document, (workspace,), 0, line_before="import pkg.util.") == {
        "pkg.util": frozenset({"text"})}
    # On a ``from`` line, the list of each submodule's import is known too.
    listed = members.find({}, document, (workspace,), 0, line_before="from pkg.c")
    assert {"Engine", "scale_value"} <= listed["from pkg.core import"]
    assert listed["from pkg.util import"] == {"text"} | MODULE_DUNDERS
    assert "from pkg.core import" not in members.find({}, document, (workspace,), 0,
                                                      line_before="import pkg.c")
    # A module that is no package, or none of the workspace's: nothing to go on with.
    assert members.find({}, document, (workspace,), 0, line_before="from pkg.core.") == {}
    assert members.find({}, document, (workspace,), 0, line_before="import os.") == {}


def test_a_relative_module_path_goes_on_with_a_module_of_its_package(workspace: Path):
    document = workspace / "pkg" / "util" / "text.py"
    members = ModuleMembers(262_144)

    def found(line: str) -> dict[str, frozenset[str]]:
        return members.find({}, document, (workspace,), 0, line_before=line)

    assert found("from .")["from ."] == {"text"}  # the document's own package
    assert found("from .")["from .."] == {"core", "util"}  # the model may write another dot
    assert found("    from ..co")["from .."] == {"core", "util"}
    assert found("from ..util.")["from ..util."] == {"text"}
    # After dots alone the list of ``from .. import`` is known too: the package's names.
    assert {"Engine", "core", "util"} <= found("from ..")["from .. import"]
    assert "from ..util. import" not in found("from ..util.")
    # And the list of each module's: ``from ..core import`` holds core's names.
    assert {"Engine", "scale_value"} <= found("from ..c")["from ..core import"]
    assert found("from ..u")["from ..util import"] == {"text"} | MODULE_DUNDERS
    assert "from ..util.text import" not in found("from ..util.")  # the document itself
    # No such package, a module that is none, past the workspace, or a name then a space.
    assert found("from ..nothere.") == {}
    assert found("from ..core.") == {}
    assert found("from ....") == {}
    top = members.find({}, workspace / "pkg" / "core.py", (workspace,), 0, line_before="from ..")
    assert top == {}  # above the top package (a folder without ``__init__.py``)
    assert found("from .text ") == {}


def test_a_package_folder_too_large_offers_no_modules(workspace: Path, monkeypatch):
    from lsp_coder.completion.related import python_members

    monkeypatch.setattr(python_members, "FOLDER_ENTRIES", 2)
    document = workspace / "pkg" / "core.py"
    members = ModuleMembers(262_144)
    assert members.find({}, document, (workspace,), 0, line_before="from .") == {}
    assert members.find({}, document, (workspace,), 0, line_before="from pkg.") == {}
