"""JavaScript and TypeScript: the relative module paths an import being typed may name.

Typed ``import { x } from './`` (or ``require('./lib/``, ``import('./``), the path can only go
on to a file or folder that exists below the folder typed so far: every file there by its
name (``./App.css``), a script file also without its suffix (``./util/format``; a TypeScript
file also by its ``.js`` name, as ESM imports write it), a folder with an index file. The key
``import '`` (the quote typed) carries them for the member rule. Where the set cannot be
known whole, there is no rule at all (a path left out would be refused): a folder that holds
too much to walk, or a typed path of only ``../`` steps (it may climb further, out of the
workspace).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cachetools import LRUCache

from .js_definitions import RESOLVE_SUFFIXES

PATH_TYPED = re.compile(r"(?:\bfrom|\bimport|\brequire)\s*\(?\s*(['\"])(\.\.?/[^'\"]*)$")
"""A line that ends inside a relative specifier of an import or a ``require``: its quote and
what is typed of it."""

CLIMBING = re.compile(r"(?:\.\./)+")
"""A typed folder of only ``../`` steps: the path may climb further."""

ENTRIES_MAX = 4096
"""At most this many files and folders are walked below the typed folder."""

SKIPPED = ("node_modules",)
"""Folders no relative import names (besides hidden ones)."""

SCRIPT_TWINS = {".ts": ".js", ".tsx": ".jsx", ".mts": ".mjs", ".cts": ".cjs"}
"""A TypeScript file may be imported by the name of the script it compiles to."""

FOLDERS_KEPT = 32
"""Walked folders remembered (by the folder, its time and the files' state)."""

_SUFFIXES = sorted(RESOLVE_SUFFIXES, key=len, reverse=True)  # ".d.ts" before ".ts"


class ImportPaths:
    """The specifiers a relative import path being typed may go on to (worker thread)."""

    def __init__(self) -> None:
        self._walked: LRUCache[tuple, frozenset[str] | None] = LRUCache(FOLDERS_KEPT)

    def find(self, line_before: str, document: Path, files_generation: int
             ) -> dict[str, frozenset[str]]:
        """``import '`` (with the quote typed) -> every specifier the path typed at the end of
        ``line_before`` may become; none where the line ends in no relative path, the typed
        folder is only ``../`` steps, does not exist, or holds too much to know it all."""
        typed = PATH_TYPED.search(line_before)
        if typed is None:
            return {}
        quote, written = typed.group(1), typed.group(2)
        folder_written = written[: written.rfind("/") + 1]
        if CLIMBING.fullmatch(folder_written):
            return {}
        folder = Path(os.path.normpath(document.parent / folder_written))
        try:
            key = (folder, folder.stat().st_mtime_ns, files_generation)
        except OSError:
            return {}
        if key not in self._walked:
            self._walked[key] = _specifiers(folder)
        below = self._walked[key]
        if not below:
            return {}
        out = {folder_written + s for s in below}
        out -= _own(out, document)
        return {f"import {quote}": frozenset(out)} if out else {}


def _specifiers(folder: Path) -> frozenset[str] | None:
    """The specifiers, relative to ``folder``, of the files and index folders below it
    (hidden and ``SKIPPED`` folders left out); None where it holds over ``ENTRIES_MAX``
    entries or is no folder."""
    if not folder.is_dir():
        return None
    out: set[str] = set()
    seen = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED)
        seen += len(dirs) + len(files)
        if seen > ENTRIES_MAX:
            return None
        rel = Path(root).relative_to(folder)
        prefix = "" if not rel.parts else rel.as_posix() + "/"
        for name in files:
            out.add(prefix + name)
            suffix = next((s for s in _SUFFIXES if name.endswith(s)), None)
            if suffix is None:
                continue
            stem = name[: -len(suffix)]
            out.add(prefix + stem)
            if suffix in SCRIPT_TWINS:
                out.add(prefix + stem + SCRIPT_TWINS[suffix])
            if stem == "index" and prefix:
                out.add(prefix.rstrip("/"))
    return frozenset(out)


def _own(specifiers: set[str], document: Path) -> set[str]:
    """Those of ``specifiers`` (relative to ``document``'s folder) that name the document
    itself: a file does not import itself."""
    suffix = next((x for x in _SUFFIXES if document.name.endswith(x)), "")
    stem = str(document)[: len(str(document)) - len(suffix)]
    own = {stem, str(document), stem + SCRIPT_TWINS.get(suffix, suffix)}
    return {s for s in specifiers if os.path.normpath(document.parent / s) in own}
