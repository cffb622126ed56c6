"""The definitions of the names used around the cursor, as items of the other files' section.

Python names resolve through the document's imports (``python_defs``), JavaScript's and
TypeScript's through theirs when they name a workspace file (``js_imports``,
``js_definitions``); the other names through the workspace index (``workspace``, ``tags``),
the definition nearest the document when several files define a name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from cachetools import LRUCache

from . import js_definitions, js_imports, tags
from .cursor_lines import distinctive_names
from .items import Item
from .js_members import ScriptMembers
from .js_paths import ImportPaths
from .python_defs import (
    IMPORT_SCAN_CHARS,
    PythonDefinitions,
    document_imports,
    used_names,
    without_imports,
)
from .python_members import ModuleMembers
from .text import display_path, read_regular
from .workspace import WorkspaceIndex

DEFINITIONS_MAX = 8
"""At most this many definitions."""

NOT_USED_YET_MAX = 3
"""At most this many definitions of names the document imports and does not use yet."""

LOOKUPS_KEPT = 64
"""Lookups remembered (by the names used, the imports, the index's and the files' state)."""


class DefinitionFinder:
    """Finds the definitions a request's names use (worker thread).

    Args:
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self._allows = allows
        self._python: PythonDefinitions | None = None
        self._scripts: js_definitions.ImportedDefinitions | None = None
        self._found: LRUCache[tuple, list[Item]] = LRUCache(LOOKUPS_KEPT)
        self._members: ModuleMembers | None = None
        self._script_members: ScriptMembers | None = None
        self._paths = ImportPaths()

    def members(self, text: str, window: str, path: Path | None, roots: tuple[Path, ...],
                max_bytes: int, files_generation: int,
                open_texts: Mapping[Path, str] | None = None) -> dict[str, frozenset[str]]:
        """The names each workspace module a Python document imports offers after its dot
        (``python_members``; ``window``: the lines above the cursor, a function's own
        imports, then the cursor line before the cursor), or each binding a JavaScript or
        TypeScript document imports from another of its files (``js_members``) and the paths
        a relative import being typed may name (``js_paths``); none for other languages.
        ``open_texts``: the texts of documents open in the editor, by path (their unsaved
        names count too). A Python import's keys are looked up as written (``look_up``)."""
        language = tags.language_of(path.suffix) if path is not None else None
        if path is None or language is None:
            return {}
        if language == "python":
            return self._module_members(max_bytes).find(document_imports(text, window), path,
                                                        roots, files_generation, open_texts)
        out: dict[str, frozenset[str]] = {}
        if tags.family(language) == "javascript":
            out |= self._paths.find(window.rsplit("\n", 1)[-1], path, files_generation)
        bindings = js_imports.imports(language, text[:IMPORT_SCAN_CHARS]).bindings
        if not bindings:
            return out
        if self._script_members is None or self._script_members.max_file_bytes != max_bytes:
            self._script_members = ScriptMembers(max_bytes, self._allows)
        return self._script_members.find(bindings, path, files_generation, open_texts) | out

    def look_up(self, key: str, path: Path, roots: tuple[Path, ...], max_bytes: int,
                files_generation: int, open_texts: Mapping[Path, str] | None = None
                ) -> frozenset[str] | None:
        """What the key of an import being written (``member_keys``) offers in the document
        ``path`` (``ModuleMembers.look_up``); None where it is unknown or the document is no
        Python file."""
        if tags.language_of(path.suffix) != "python":
            return None
        return self._module_members(max_bytes).look_up(key, path, roots, files_generation,
                                                       open_texts)

    def _module_members(self, max_bytes: int) -> ModuleMembers:
        """The Python module names found so far, for files of up to ``max_bytes``."""
        if self._members is None or self._members.max_file_bytes != max_bytes:
            self._members = ModuleMembers(max_bytes, self._allows)
        return self._members

    def mend_import_path(self, line_before: str, answer_line: str, path: Path,
                         roots: tuple[Path, ...], files_generation: int) -> str | None:
        """``answer_line`` with the relative import path it goes on with mended to the one
        file of its name the path typed in ``line_before`` can reach, where it names no file
        (``ImportPaths.mend``); None for a document of no JavaScript-family language or where
        there is nothing to mend."""
        language = tags.language_of(path.suffix)
        if language is None or tags.family(language) != "javascript":
            return None
        return self._paths.mend(line_before, answer_line, path, roots, files_generation)

    def items(self, text: str, window: str, nearby: str, path: Path | None,
              roots: tuple[Path, ...], max_bytes: int, index: WorkspaceIndex | None,
              files_generation: int, not_used_yet: bool = False) -> list[Item]:
        """The definitions of the names in ``nearby`` (``cursor_lines.lines_by_distance``),
        nearest first, as the imports of the document's start (and, in Python, of ``window``,
        the lines above: a function's own imports) or the workspace ``index`` resolve them;
        with ``not_used_yet`` (JavaScript, TypeScript) then those of names the document
        imports and does not use yet (``js_imports.not_used_yet``), the line being typed
        often being their first use. Found again only when the names that could resolve,
        the imports, the index or a file (``files_generation``) changed: a keystroke inside a
        new word changes none of them."""
        language = tags.language_of(path.suffix) if path is not None else None
        imported: dict = {}
        pending: list[str] = []
        if language == "python":
            imported = document_imports(text, window)
            used = [u for u in used_names(without_imports(nearby)) if u.split(".")[0] in imported]
        else:
            scripts = js_imports.imports(language or "", text[:IMPORT_SCAN_CHARS])
            imported = scripts.bindings
            names = distinctive_names(js_imports.without_imports(nearby, scripts)
                                      if imported else nearby)
            wanted = set(imported) | set(js_imports.members(imported, nearby))
            used = [n for n in names
                    if n in wanted or (index is not None and index.holds(n))]
            if not_used_yet and len(text) <= max_bytes:
                pending = [n for n in js_imports.not_used_yet(scripts, text)
                           if n not in used][:NOT_USED_YET_MAX]
        key = (path, roots, max_bytes, tuple(used), tuple(imported.items()), tuple(pending),
               index.generation if index is not None else -1, files_generation)
        cached = self._found.get(key)
        if cached is None:
            cached = self._find(imported, used, path, language, roots, max_bytes, index,
                                pending)
            self._found[key] = cached
        return cached

    def _find(self, imported: dict, used: list[str], path: Path | None, language: str | None,
              roots: tuple[Path, ...], max_bytes: int,
              index: WorkspaceIndex | None, pending: list[str]) -> list[Item]:
        out: list[Item] = []
        if language == "python":
            if self._python is None or self._python.max_file_bytes != max_bytes:
                self._python = PythonDefinitions(max_bytes, self._allows)
            for found in self._python.find(imported, used, path, roots, DEFINITIONS_MAX):
                out.append(Item(("def", found.path, found.name),
                                display_path(found.path, roots), found.text, 0))
            plain = {name.split(".")[0] for name in used}
            names = [n for n in imported if n in plain]
        elif imported and path is not None:
            if self._scripts is None or self._scripts.max_file_bytes != max_bytes:
                self._scripts = js_definitions.ImportedDefinitions(max_bytes, self._allows)
            found_here = self._scripts.find(imported, used, path, DEFINITIONS_MAX)
            if pending:
                shown = {(f.file, f.name) for f in found_here}
                found_here += [f for f in self._scripts.find(imported, pending, path,
                                                             NOT_USED_YET_MAX)
                               if (f.file, f.name) not in shown]
            out += [Item(("def", f.file, f.name), display_path(f.file, roots), f.text, 0)
                    for f in found_here]
            resolved = {f.used for f in found_here}
            # A name not found where its import points (re-exported) is looked for by the
            # name it is exported as.
            names = [_exported(imported.get(n), n) for n in used if n not in resolved]
        else:
            names = used
        if index is None or language is None:
            return out
        have = {i.key[2] for i in out}
        for name in names:
            if len(out) >= DEFINITIONS_MAX:
                break
            if name in have:
                continue
            found = _indexed(index, name, path, language, roots, self._allows)
            if found is not None:
                have.add(name)
                out.append(found)
        return out


def _exported(binding: js_imports.Binding | None, used: str) -> str:
    """The name to look ``used`` up by in the index: the name its import exports it as."""
    if binding is None or binding.exported in (js_imports.DEFAULT, js_imports.NAMESPACE):
        return used
    return binding.exported


def _indexed(index: WorkspaceIndex, name: str, path: Path | None, language: str,
             roots: tuple[Path, ...], allows: Callable[[Path], bool]) -> Item | None:
    """The definition of ``name`` in another workspace file of the same language family,
    the one nearest ``path`` when several files define it."""
    family = tags.family(language)
    candidates = []
    for file, tag, file_tags in index.lookup(name):
        other = tags.language_of(file.suffix)
        if (file == path or other is None or tags.family(other) != family
                or not allows(file)):
            continue
        shared = len(_common_parts(file, path)) if path is not None else 0
        candidates.append((-shared, len(file.parts), str(file), tag.start_line, file, tag,
                           file_tags))
    if not candidates:
        return None
    *_, file, tag, file_tags = min(candidates, key=lambda c: c[:4])
    data = read_regular(file, index.max_file_bytes)
    if data is None:
        return None
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    if tag.start_line >= len(lines):
        return None
    rendered = tags.render(tag, lines, file_tags)
    return Item(("def", file, name), display_path(file, roots), rendered, 0)


def _common_parts(a: Path, b: Path) -> list[str]:
    out = []
    for x, y in zip(a.parent.parts, b.parent.parts):
        if x != y:
            break
        out.append(x)
    return out
