"""JavaScript and TypeScript: the relative module paths an import being typed may name.

Typed ``import { x } from './`` (or ``require('./lib/``, ``import('./``), the path can only go
on to a file or folder that exists below the folder typed so far: every file there by its
name (``./App.css``), a script file also without its suffix (``./util/format``; a TypeScript
file also by its ``.js`` name, as ESM imports write it), a folder with an index file. The key
``import '`` (the quote typed) carries them for the member rule. Where the set cannot be
known whole, there is no rule at all (a path left out would be refused): a folder that holds
too much to walk, or a typed path of only ``../`` steps (it may climb further, out of the
workspace).

An answer's path that names no file is mended instead (``ImportPaths.mend``): to the one file
of the same name the typed path can reach, climbing ``../`` steps up to the workspace's root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cachetools import LRUCache

from ...member_keys import IMPORT_STRING, import_path_key
from .js_definitions import RESOLVE_SUFFIXES, resolve

PATH_TYPED = re.compile(IMPORT_STRING.pattern + "$")
"""A line that ends inside the string of an import or a ``require``: its quote and what is
typed of it."""

RELATIVE = re.compile(r"\.\.?/")
"""The start of a relative path."""

CLIMBING = re.compile(r"(?:\.\./)+")
"""A typed folder of only ``../`` steps: the path may climb further."""

ENTRIES_MAX = 4096
"""At most this many files and folders are walked below a folder."""

SKIPPED = ("node_modules",)
"""Folders no relative import names (besides hidden ones)."""

SCRIPT_TWINS = {".ts": ".js", ".tsx": ".jsx", ".mts": ".mjs", ".cts": ".cjs"}
"""A TypeScript file may be imported by the name of the script it compiles to."""

FOLDERS_KEPT = 32
"""Walked folders remembered (by the folder, its time and the files' state)."""

_SUFFIXES = sorted(RESOLVE_SUFFIXES, key=len, reverse=True)  # ".d.ts" before ".ts"


def relative_path_typed(line_before: str) -> bool:
    """Whether ``line_before`` ends inside the relative path of an import or a ``require``."""
    return _typed(line_before) is not None


class ImportPaths:
    """The specifiers a relative import path being typed may go on to (worker thread)."""

    def __init__(self) -> None:
        self._walked: LRUCache[tuple, frozenset[str] | None] = LRUCache(FOLDERS_KEPT)

    def find(self, line_before: str, document: Path, files_generation: int
             ) -> dict[str, frozenset[str]]:
        """``import '`` (with the quote typed) -> every specifier the path typed at the end of
        ``line_before`` may become; none where the line ends in no relative path, the typed
        folder is only ``../`` steps, does not exist, or holds too much to know it all."""
        typed = _typed(line_before)
        if typed is None or CLIMBING.fullmatch(typed[2]):
            return {}
        quote, _written, folder_written = typed
        out = self._reachable(folder_written, document, (), files_generation)
        out -= _own(out, document)
        return {import_path_key(quote): frozenset(out)} if out else {}

    def mend(self, line_before: str, answer_line: str, document: Path,
             roots: tuple[Path, ...], files_generation: int) -> str | None:
        """``answer_line`` (what an answer writes after ``line_before`` on its line) with the
        relative import path it goes on with changed to the one file of the same name the
        typed folder can reach (its shortest spelling), where the path names no file; None
        where it names one, where no file or several have that name, or where ``line_before``
        ends in no relative path (or one of ``../`` steps from a document in none of
        ``roots``)."""
        typed = _typed(line_before)
        if typed is None:
            return None
        quote, written, folder_written = typed
        end = answer_line.find(quote)
        path = answer_line if end < 0 else answer_line[:end]
        whole = written + path
        name = whole.rsplit("/", 1)[-1]
        if name in ("", ".", "..") or resolve(whole, document) is not None:
            return None
        reach = self._reachable(folder_written, document, roots, files_generation)
        fits = sorted((s for s in reach if s.startswith(written) and s.endswith("/" + name)),
                      key=lambda s: (len(s), s))
        files = {resolve(s, document) for s in fits}
        if len(files) != 1 or None in files or _normal(document) in files:
            return None
        return fits[0][len(written) :] + answer_line[len(path) :]

    def _reachable(self, folder_written: str, document: Path, roots: tuple[Path, ...],
                   files_generation: int) -> set[str]:
        """Every specifier a path typed up to ``folder_written`` can name: below that folder;
        where it is only ``../`` steps, also below each folder above it up to the innermost
        of ``roots`` it is in (by as many more steps); none where a folder is too large."""
        folder = Path(os.path.normpath(document.parent / folder_written))
        if not CLIMBING.fullmatch(folder_written):
            return {folder_written + s for s in self._below(folder, files_generation) or ()}
        inside = [r for r in map(_normal, roots) if folder.is_relative_to(r)]
        if not inside:
            return set()
        depth = len(folder.relative_to(max(inside, key=lambda r: len(r.parts))).parts)
        out: set[str] = set()
        for up in range(depth + 1):
            below = self._below(folder.parents[up - 1] if up else folder, files_generation)
            if below is None:
                return set()
            out.update(folder_written + "../" * up + s for s in below)
        return out

    def _below(self, folder: Path, files_generation: int) -> frozenset[str] | None:
        """``_specifiers(folder)``, remembered by the folder's time and ``files_generation``."""
        try:
            key = (folder, folder.stat().st_mtime_ns, files_generation)
        except OSError:
            return None
        if key not in self._walked:
            self._walked[key] = _specifiers(folder)
        return self._walked[key]


def _typed(line_before: str) -> tuple[str, str, str] | None:
    """The quote, the path typed and its folder (up to its last ``/``) where ``line_before``
    ends inside a relative import path."""
    typed = PATH_TYPED.search(line_before)
    if typed is None or not RELATIVE.match(typed.group(2)):
        return None
    written = typed.group(2)
    return typed.group(1), written, written[: written.rfind("/") + 1]


def _normal(path: Path) -> Path:
    return Path(os.path.normpath(path))


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
