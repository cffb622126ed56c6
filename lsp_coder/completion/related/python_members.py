"""Python: every name a workspace module the open file imports offers after its dot.

``from email import errors`` then ``errors.`` may go on only with a name ``errors.py`` binds at
its top level (a definition, an assignment, an import, in any branch of an ``if`` or a
``try``; a ``global`` name of a function), a submodule of a package, or a module's own dunder.
A module whose names cannot all be known from its text (``from x import *``, a module
``__getattr__``, ``globals()``, ``sys.modules``, ``exec``) offers none: no rule is made for
it. On a line that starts ``from X import``, X's names are those the list may hold; on one
that ends in a package's dotted path (``from pkg.``, or relative: ``from .``, ``from ..sub.``),
its submodules come after the dot, and the lists of their ``from`` imports hold their names
(after ``from .`` alone, ``from . import``'s the package's own).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from pathlib import Path

from cachetools import LRUCache

from ...member_keys import (
    FROM_IMPORT,
    import_list_key,
    relative_module_key,
    relative_module_typed,
)
from .python_defs import find_module, search_roots
from .python_render import Imported
from .text import FileReads

MODULES_LOOKED_UP = 32
"""At most this many imported names are looked up as modules for one document."""

MODULES_CACHED = 128
"""The parsed names of this many module files are kept (checked against size and time)."""

LOOKUPS_KEPT = 64
"""Documents' lookups kept (by the document's path, its imports and the files' state)."""

MODULE_DUNDERS = frozenset({
    "__name__", "__file__", "__doc__", "__dict__", "__spec__", "__loader__", "__package__",
    "__path__", "__all__", "__builtins__", "__cached__", "__annotations__", "__class__",
})
"""Names every module (or package) has without binding them."""

_MODULE_PATH = re.compile(r"\s*(?:from|import)\s+([A-Za-z_][\w.]*)\.\w*$")
"""A line that ends in a module's dotted path being written (``from pkg.sub.``): the
package before its last dot."""

LEVELS_AHEAD = 1
"""After ``from .`` typed, the paths one package further up are known too (the model may
write another dot)."""

FOLDER_ENTRIES = 4096
"""A package folder with more entries than this offers no submodules (none can be ruled out)."""

OPEN_WORLD = (b"globals()", b"locals()", b"vars()", b"sys.modules[", b"setattr(sys.modules",
              b"exec(")
"""Text that can bind module names no statement shows."""


def module_names(data: bytes) -> frozenset[str] | None:
    """The names the module ``data`` binds at its top level, with ``MODULE_DUNDERS``; None
    when they cannot all be known (a star import, ``__getattr__``, ``OPEN_WORLD``, a syntax
    error)."""
    if any(marker in data for marker in OPEN_WORLD):
        return None
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set(MODULE_DUNDERS)
    for node in _top_level(tree.body):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        names.update(_bound(node))
    names.update(name for node in ast.walk(tree) if isinstance(node, ast.Global)
                 for name in node.names)
    return None if "__getattr__" in names else frozenset(names)


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run at module level: ``body`` and the blocks of its ``if``,
    ``try``, ``for``, ``while`` and ``with`` statements, not function or class bodies."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(node, block, None)
            if inner and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.ClassDef)):
                yield from _top_level(inner)
        for handler in getattr(node, "handlers", ()):
            yield from _top_level(handler.body)
        for case in getattr(node, "cases", ()):
            yield from _top_level(case.body)


def _bound(node: ast.stmt) -> Iterator[str]:
    """The names ``node`` binds in its own scope."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.asname or alias.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom):
        for alias in node.names:
            yield alias.asname or alias.name
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars]
    elif isinstance(node, getattr(ast, "TypeAlias", ())):
        targets = [node.name]  # type: ignore[attr-defined]
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                yield sub.id
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for sub in ast.walk(node):  # ``if (m := ...)`` binds ``m`` in the module
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                yield sub.target.id
    for handler in getattr(node, "handlers", ()):
        if handler.name:
            yield handler.name


def submodules(folder: Path) -> frozenset[str] | None:
    """The names of the modules and packages in ``folder``; None where it cannot be read or
    holds more than ``FOLDER_ENTRIES`` entries."""
    try:
        entries = list(islice(folder.iterdir(), FOLDER_ENTRIES + 1))
    except OSError:
        return None
    if len(entries) > FOLDER_ENTRIES:
        return None
    out = {e.stem for e in entries if e.suffix == ".py" and e.stem.isidentifier()}
    out |= {e.name for e in entries
            if e.is_dir() and e.name.isidentifier() and e.name != "__pycache__"}
    return frozenset(out - {"__init__"})


class ModuleMembers:
    """The names each module the document imports offers (worker thread).

    Args:
        max_file_bytes: a module larger than this is not read (it offers no names).
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, max_file_bytes: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self.max_file_bytes = max_file_bytes
        self._names = FileReads(max_file_bytes, lambda _file, data: module_names(data),
                                MODULES_CACHED, allows)
        self._found: LRUCache[tuple, dict[str, tuple[Path, frozenset[str]]]] = LRUCache(
            LOOKUPS_KEPT)

    def find(self, imported: dict[str, Imported], path: Path | None, roots: tuple[Path, ...],
             files_generation: int, open_texts: Mapping[Path, str] | None = None,
             line_before: str = "") -> dict[str, frozenset[str]]:
        """Local name -> the names of the workspace module it is bound to, for the names of
        ``imported`` (``python_defs.imports``) that are modules whose names are all known;
        a module open in the editor (``open_texts``) also offers the names its unsaved text
        binds (none when that text's names cannot all be known). Where ``line_before`` (the
        cursor line before the cursor) starts ``from X import``: also ``from X import`` ->
        the names of ``X``, the names that list may hold; where it ends in a module's path
        (``import pkg.sub.``): also ``pkg.sub`` -> the package's submodules; in a relative
        one (``from ..sub.``): its key (``relative_module_key``) -> the package's submodules
        (and after dots alone, ``from .. import`` -> the package's names)."""
        head = FROM_IMPORT.match(line_before)
        listed = (head.group(1), len(head.group(2)), head.group(3)) if head else None
        typed = _MODULE_PATH.match(line_before)
        package = typed.group(1) if typed else None
        from_line = typed is not None and line_before.lstrip().startswith("from")
        typed_path = relative_module_typed(line_before)
        relative = typed_path[0] if typed_path is not None else None
        key = (path, roots, files_generation, frozenset(imported.items()), listed, package,
               from_line, relative)
        found = self._found.get(key)
        if found is None:
            found = self._find(imported, path, roots, listed, package, from_line, relative)
            self._found[key] = found
        out: dict[str, frozenset[str]] = {}
        for local, (file, names) in found.items():
            text = (open_texts or {}).get(file) if file is not None else None
            if text is not None:
                unsaved = self._names.unsaved(file, text)
                if unsaved is None:
                    continue
                names = names | unsaved
            out[local] = names
        return out

    def _find(self, imported: dict[str, Imported], path: Path | None,
              roots: tuple[Path, ...], listed: tuple[str, int, str] | None,
              package: str | None, from_line: bool, relative: str | None
              ) -> dict[str, tuple[Path | None, frozenset[str]]]:
        """``find``'s names by key, each with the file whose unsaved text adds to them (None:
        a package's submodules, which no text adds to)."""
        search = search_roots(path, roots)
        base = path.parent if path is not None else None
        out: dict[str, tuple[Path | None, frozenset[str]]] = {}
        for local, target in list(imported.items())[:MODULES_LOOKED_UP]:
            module = (f"{target.module}.{target.attr}" if target.module and target.attr
                      else target.module or target.attr)
            found = self._module(module, target.level, base, search, path)
            if found is not None:
                out[local] = found
        if listed is not None:
            written, level, module = listed
            found = self._module(module, level, base, search, path)
            if found is not None:
                out[import_list_key(written)] = found
        if package is not None:
            for key, names in self._package(package, from_line, base, search, path).items():
                out.setdefault(key, names)  # an imported name's own names stay
        if relative is not None and path is not None:
            ahead = LEVELS_AHEAD if not relative.strip(".") else 0  # ``from .`` then ``.``
            for more in range(ahead + 1):
                out |= self._relative("." * more + relative, path, search)
        return out

    def _package(self, package: str, from_line: bool, base: Path | None,
                 search: tuple[Path, ...], path: Path | None
                 ) -> dict[str, tuple[Path | None, frozenset[str]]]:
        """What may come after ``package.`` (a workspace package's dotted path): its
        submodules; on a ``from`` line also the names of each one's ``from package.mod
        import`` list (the first ``MODULES_LOOKED_UP`` by name)."""
        file = find_module(package, 0, base, search)
        names = submodules(file.parent) if file is not None and file.name == "__init__.py" else None
        if names is None:
            return {}
        inside = [f"{package}.{name}" for name in sorted(names)[:MODULES_LOOKED_UP]]
        return {package: (None, names)} | (
            self._lists(inside, 0, base, search, path) if from_line else {})

    def _relative(self, package: str, path: Path, search: tuple[Path, ...]
                  ) -> dict[str, tuple[Path | None, frozenset[str]]]:
        """What may come after ``from package`` (``..sub.``) in the document ``path``: the
        package folder's modules and packages, if it is the document's folder or a package
        (with its ``__init__.py``) below one of ``search``, and the names of each one's
        ``from ..sub.mod import`` list (the first ``MODULES_LOOKED_UP`` by name); after dots
        alone also those of ``from .. import``."""
        level = len(package) - len(package.lstrip("."))
        folder = path.parent
        for _ in range(level - 1):
            folder = folder.parent
        folder = folder.joinpath(*package[level:].split(".")[:-1])
        if folder != path.parent and not (folder / "__init__.py").is_file():
            return {}  # above the top package: no module to import there
        if not folder.is_dir() or not any(folder.is_relative_to(r) for r in search):
            return {}
        names = submodules(folder)
        if names is None:
            return {}
        inside = [package[level:] + name for name in sorted(names)[:MODULES_LOOKED_UP]]
        own = [""] if level == len(package) else []  # ``from .. import``
        return {relative_module_key(package): (None, names)} | self._lists(
            own + inside, level, path.parent, search, path)

    def _lists(self, modules: list[str], level: int, base: Path | None,
               search: tuple[Path, ...], path: Path | None
               ) -> dict[str, tuple[Path | None, frozenset[str]]]:
        """``from MODULE import`` (``level`` dots before each of ``modules``) -> the names
        of each module found whose names are all known (``_module``)."""
        out: dict[str, tuple[Path | None, frozenset[str]]] = {}
        for module in modules:
            found = self._module(module, level, base, search, path)
            if found is not None:
                out[import_list_key("." * level + module)] = found
        return out

    def _module(self, module: str, level: int, base: Path | None, search: tuple[Path, ...],
                path: Path | None) -> tuple[Path, frozenset[str]] | None:
        """The file of a workspace module other than ``path`` and every name it offers (its
        submodules too, for a package); None where it is not found or its names cannot all
        be known."""
        file = find_module(module, level, base, search)
        if file is None or file == path:
            return None
        names = self._names.get(file)
        if names is None:
            return None
        if file.name == "__init__.py":
            inside = submodules(file.parent)
            if inside is None:
                return None
            names = names | inside
        return file, names
