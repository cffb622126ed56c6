"""JavaScript and TypeScript: the relative module paths an import being typed may name.

Typed ``import { x } from './`` (or ``require('../``, ``import('./``), the path can only go on
to a file or folder that exists below the folder typed so far: every specifier that names a
script file there (``./util/format``, with its own suffix or without; a TypeScript file also
by its ``.js`` name, as ESM imports write it) or a folder with an index file; after a typed
``../`` also below the folders further up (``CLIMB``). The key ``import '`` (the quote typed)
carries them for the member rule. A folder that holds too much to walk gives no paths at
all, never some of them (a path left out would be refused).
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

DEPTH = 4
"""Folders below the typed one that are walked."""

CLIMB = 2
"""After a typed ``../``, the folders this many levels further up are walked too."""

ENTRIES_MAX = 4096
"""At most this many files and folders are walked for one folder."""

SKIPPED = ("node_modules",)
"""Folders no relative import names (besides hidden ones)."""

SCRIPT_TWINS = {".ts": ".js", ".tsx": ".jsx", ".mts": ".mjs", ".cts": ".cjs"}
"""A TypeScript file may be imported by the name of the script it compiles to."""

FOLDERS_KEPT = 32
"""Walked folders remembered (by the folder and the files' state)."""

_SUFFIXES = sorted(RESOLVE_SUFFIXES, key=len, reverse=True)  # ".d.ts" before ".ts"


class ImportPaths:
    """The specifiers a relative import path being typed may go on to (worker thread)."""

    def __init__(self) -> None:
        self._walked: LRUCache[tuple[Path, int], frozenset[str] | None] = LRUCache(
            FOLDERS_KEPT)

    def find(self, line_before: str, document: Path, files_generation: int
             ) -> dict[str, frozenset[str]]:
        """``import '`` (with the quote typed) -> every specifier the path typed at the end of
        ``line_before`` may become; none where the line ends in no relative path, its folder
        does not exist or holds too much to know it all."""
        typed = PATH_TYPED.search(line_before)
        if typed is None:
            return {}
        quote, written = typed.group(1), typed.group(2)
        folder_written = written[: written.rfind("/") + 1]
        out: set[str] = set()
        # After ``../`` the path may climb further: each folder up to ``CLIMB`` above.
        climbs = CLIMB if re.fullmatch(r"(?:\.\./)+", folder_written) else 0
        for up in range(climbs + 1):
            above = folder_written + "../" * up
            folder = Path(os.path.normpath(document.parent / above))
            if not folder.is_dir():
                break
            key = (folder, files_generation)
            if key not in self._walked:
                self._walked[key] = _specifiers(folder)
            below = self._walked[key]
            if below is None:
                return {}  # too much to know it all: a path there would be refused
            out.update(above + s for s in below)
            if folder.parent == folder:
                break
        out -= _own(out, document)
        return {f"import {quote}": frozenset(out)} if out else {}


def _specifiers(folder: Path) -> frozenset[str] | None:
    """The specifiers, relative to ``folder``, of the script files and index folders below
    it (``DEPTH`` deep, hidden and ``SKIPPED`` folders left out); None where it holds over
    ``ENTRIES_MAX`` entries (a partial set would refuse a path that exists)."""
    out: set[str] = set()
    seen = 0
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        depth = len(rel.parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED
                         and depth < DEPTH)
        seen += len(dirs) + len(files)
        if seen > ENTRIES_MAX:
            return None
        prefix = "" if depth == 0 else rel.as_posix() + "/"
        for name in files:
            suffix = next((s for s in _SUFFIXES if name.endswith(s)), None)
            if suffix is None:
                continue
            stem = name[: -len(suffix)]
            out.update((prefix + name, prefix + stem))
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
