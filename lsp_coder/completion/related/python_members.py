"""Python: every name a workspace module offers after its dot, or in an import of it.

``from email import errors`` then ``errors.`` may go on only with a name ``errors.py`` binds at
its top level (a definition, an assignment, an import, in any branch of an ``if`` or a
``try``; a ``global`` name of a function), a submodule of a package, or a module's own dunder.
A module whose names cannot all be known from its text (``from x import *``, a module
``__getattr__``, ``globals()``, ``sys.modules``, ``exec``) offers none: no rule is made for
it. ``find`` gives the names each name the document imports offers, up front; ``look_up``
gives an import statement's key as the model writes it (``member_keys``): ``from X import``
-> the names X's list may hold, ``pkg.sub`` (absolute) or ``from ..sub.`` (relative) -> the
modules and packages that may come next in the path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from cachetools import LRUCache

from ...member_keys import FROM_IMPORT
from .python_defs import find_module, search_roots
from .python_module_names import PATH_CHANGED, module_names, submodules
from .python_render import Imported
from .text import FileReads

MODULES_LOOKED_UP = 32
"""At most this many imported names are looked up as modules for one document."""

MODULES_CACHED = 128
"""The parsed names of this many module files are kept (checked against size and time)."""

LOOKUPS_KEPT = 64
"""Documents' lookups kept (by the document's path, its imports and the files' state)."""

KEYS_KEPT = 256
"""Import keys' lookups kept (by the key, the document's path and the files' state)."""

_RELATIVE_KEY = re.compile(r"from (\.+)((?:\w+\.)*)")
"""The key of a relative import's package (``relative_module_key``): its dots, its path."""

_PACKAGE_KEY = re.compile(r"[A-Za-z_]\w*(?:\.\w+)*")
"""The key of an absolute import's package: its dotted path."""

Found = tuple[Path | None, frozenset[str]]
"""Names, with the module file whose unsaved text adds to them (None: a package's modules)."""


class ModuleMembers:
    """The names workspace modules offer (worker thread).

    Args:
        max_file_bytes: a module larger than this is not read (it offers no names).
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, max_file_bytes: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self.max_file_bytes = max_file_bytes
        self._names = FileReads(max_file_bytes, lambda _file, data: module_names(data),
                                MODULES_CACHED, allows)
        self._closed = FileReads(max_file_bytes, lambda _file, data: PATH_CHANGED not in data,
                                 MODULES_CACHED, allows)
        """Whether a package's ``__init__`` keeps its submodules to its own folder."""
        self._found: LRUCache[tuple, dict[str, Found]] = LRUCache(LOOKUPS_KEPT)
        self._keys: LRUCache[tuple, Found | None] = LRUCache(KEYS_KEPT)

    def find(self, imported: dict[str, Imported], path: Path | None, roots: tuple[Path, ...],
             files_generation: int, open_texts: Mapping[Path, str] | None = None
             ) -> dict[str, frozenset[str]]:
        """Local name -> the names of the workspace module it is bound to, for the names of
        ``imported`` (``python_defs.imports``) that are modules whose names are all known;
        a module open in the editor (``open_texts``) also offers the names its unsaved text
        binds (none when that text's names cannot all be known)."""
        key = (path, roots, files_generation, frozenset(imported.items()))
        found = self._found.get(key)
        if found is None:
            search = search_roots(path, roots)
            base = path.parent if path is not None else None
            found = {}
            for local, target in list(imported.items())[:MODULES_LOOKED_UP]:
                module = (f"{target.module}.{target.attr}" if target.module and target.attr
                          else target.module or target.attr)
                names = self._module(module, target.level, base, search, path)
                if names is not None:
                    found[local] = names
            self._found[key] = found
        out: dict[str, frozenset[str]] = {}
        for local, names in found.items():
            with_unsaved = self._unsaved(names, open_texts)
            if with_unsaved is not None:
                out[local] = with_unsaved
        return out

    def look_up(self, key: str, path: Path | None, roots: tuple[Path, ...],
                files_generation: int, open_texts: Mapping[Path, str] | None = None
                ) -> frozenset[str] | None:
        """What the import key ``key`` offers in the document ``path``: after ``from X
        import``, X's names (a workspace module's, not the document's own); after a
        package's path (``pkg.sub``, or relative ``from ..sub.``: the document's folder or a
        package below the search roots), the package's modules and packages but the
        document's own module. None where it is none of these or cannot all be known."""
        cached = (key, path, roots, files_generation)
        if cached not in self._keys:
            self._keys[cached] = self._look_up(key, path, roots)
        found = self._keys[cached]
        return None if found is None else self._unsaved(found, open_texts)

    def _look_up(self, key: str, path: Path | None, roots: tuple[Path, ...]) -> Found | None:
        """``look_up``'s names, with the file whose unsaved text adds to them."""
        search = search_roots(path, roots)
        base = path.parent if path is not None else None
        listed = FROM_IMPORT.fullmatch(key)
        if listed is not None:
            return self._module(listed.group(3), len(listed.group(2)), base, search, path,
                                imported=True)
        relative = _RELATIVE_KEY.fullmatch(key)
        if relative is not None:
            folder = _relative_folder(len(relative.group(1)), relative.group(2), path, search)
        elif _PACKAGE_KEY.fullmatch(key):
            file = find_module(key, 0, base, search)
            folder = file.parent if file is not None and file.name == "__init__.py" else None
        else:
            return None
        names = self._submodules(folder) if folder is not None else None
        return None if names is None else (None, _less_itself(names, folder, path))

    def _submodules(self, folder: Path) -> frozenset[str] | None:
        """The modules and packages of the package ``folder`` (``submodules``); None where
        its ``__init__`` may find others elsewhere (``PATH_CHANGED``) or cannot be read."""
        init = folder / "__init__.py"
        if init.is_file() and not self._closed.get(init):
            return None
        return submodules(folder)

    def _unsaved(self, found: Found, open_texts: Mapping[Path, str] | None
                 ) -> frozenset[str] | None:
        """The names of ``found`` with those its module's unsaved text binds (None when that
        text's names cannot all be known)."""
        file, names = found
        text = (open_texts or {}).get(file) if file is not None else None
        if text is None:
            return names
        unsaved = self._names.unsaved(file, text)
        return None if unsaved is None else names | unsaved

    def _module(self, module: str, level: int, base: Path | None, search: tuple[Path, ...],
                path: Path | None, imported: bool = False) -> tuple[Path, frozenset[str]] | None:
        """The file of a workspace module other than ``path`` and every name it offers (its
        submodules too, for a package: where they are ``imported`` in a list, not ``path``'s
        own module); None where it is not found or its names cannot all be known."""
        file = find_module(module, level, base, search)
        if file is None or file == path:
            return None
        names = self._names.get(file)
        if names is None:
            return None
        if file.name == "__init__.py":
            inside = self._submodules(file.parent)
            if inside is None:
                return None
            names = names | (_less_itself(inside, file.parent, path) if imported else inside)
        return file, names


def _less_itself(names: frozenset[str], folder: Path, path: Path | None) -> frozenset[str]:
    """``names`` (the modules of ``folder``) less the document's own module (``path``): an
    import of a module from itself is never what is meant."""
    if path is None or path.parent != folder or path.stem == "__init__" or (
            folder / path.stem).is_dir():
        return names
    return names - {path.stem}


def _relative_folder(level: int, path_in: str, path: Path | None,
                     search: tuple[Path, ...]) -> Path | None:
    """The folder of the package a relative import names (``level`` dots, then
    ``path_in``: ``sub.inner.``) from the document ``path``: None above the top package
    (a folder without ``__init__.py`` other than the document's) or outside ``search``."""
    if path is None:
        return None
    folder = path.parent
    for _ in range(level - 1):
        folder = folder.parent
    folder = folder.joinpath(*path_in.split(".")[:-1])
    if folder != path.parent and not (folder / "__init__.py").is_file():
        return None
    if not folder.is_dir() or not any(folder.is_relative_to(r) for r in search):
        return None
    return folder
