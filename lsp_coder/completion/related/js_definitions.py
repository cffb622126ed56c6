"""JavaScript and TypeScript imports followed to the file a relative specifier names, and the
definitions there that imported names stand for.

A relative specifier resolves as Node and TypeScript's bundler resolution do: the file, the
file with a known suffix, the folder's ``index``; a ``.js`` specifier also to its ``.ts``
source. A package specifier (``react``) names no file here: it is left to the workspace index,
its code not being the workspace's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import tags
from .js_imports import DEFAULT, NAMESPACE, Binding, is_relative
from .text import FileReads

RESOLVE_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
"""Suffixes tried after a specifier that names no file, in this order."""

FILES_CACHED = 64
"""Files whose definitions are remembered (read again when their size or time changes)."""


@dataclass(frozen=True, slots=True)
class Found:
    """The definition an imported name stands for."""

    used: str
    """The name the cursor's lines use for it (an import's alias, ``ns.name``'s name)."""
    file: Path
    """The file that defines it."""
    name: str
    """The name it is defined as there."""
    text: str
    """Its signature and members, as ``tags.render`` shows them."""


def resolve(source: str, document: Path) -> Path | None:
    """The file a relative ``source`` imported by ``document`` names, or None (a package, or
    no such file)."""
    if not is_relative(source):
        return None
    base = Path(os.path.normpath(document.parent / source))
    tries = [base]
    if base.suffix in (".js", ".jsx", ".mjs", ".cjs"):  # TypeScript's ESM imports name .js
        stem = base.with_suffix("")
        tries += [stem.with_name(stem.name + s) for s in (".ts", ".tsx", ".mts", ".cts")]
    tries += [base.with_name(base.name + s) for s in RESOLVE_SUFFIXES]
    tries += [base / f"index{s}" for s in RESOLVE_SUFFIXES]
    for path in tries:
        try:
            if path.is_file():
                return path
        except OSError:
            continue
    return None


class ImportedDefinitions:
    """Finds the definitions that a document's imported names stand for (worker thread).

    Args:
        max_file_bytes: a larger file is not read.
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, max_file_bytes: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self.max_file_bytes = max_file_bytes
        self._files = FileReads(max_file_bytes, _lines_and_tags, FILES_CACHED, allows)

    def find(self, bindings: dict[str, Binding], names: list[str], document: Path,
             limit: int) -> list[Found]:
        """The definitions of ``names`` (nearest the cursor first) that ``bindings`` import
        from workspace files: a name imported by name or as a default, then a name read from
        a module imported whole (``ns.name``), at most ``limit``."""
        out: list[Found] = []
        files: dict[str, Path | None] = {}  # each specifier resolved once per call

        def file_of(source: str) -> Path | None:
            if source not in files:
                files[source] = resolve(source, document)
            return files[source]

        modules = [b.source for local, b in bindings.items()
                   if b.exported == NAMESPACE and local in names]
        for name in names:
            if len(out) >= limit:
                break
            binding = bindings.get(name)
            if binding is not None and binding.exported != NAMESPACE:
                found = self._definition(name, file_of(binding.source), binding.exported)
            else:
                found = next((f for source in modules
                              if (f := self._definition(name, file_of(source), name))), None)
            if found is not None and all(f.file != found.file or f.name != found.name
                                         for f in out):
                out.append(found)
        return out

    def _definition(self, used: str, file: Path | None, name: str) -> Found | None:
        """``name`` (or the default export) as ``file`` defines it."""
        read = self._read(file) if file is not None else None
        if read is None:
            return None
        lines, file_tags = read
        tag = None
        for candidate in file_tags:
            line = lines[candidate.start_line] if candidate.start_line < len(lines) else ""
            if name == DEFAULT:
                hit = line.lstrip().startswith("export default")
            else:
                hit = candidate.name == name and not line[:1].isspace()  # top level only
            if hit:
                tag = candidate
                break
        if tag is None:
            return None
        return Found(used, file, tag.name, tags.render(tag, lines, file_tags))

    def _read(self, file: Path) -> tuple[list[str], list[tags.Tag]] | None:
        if tags.language_of(file.suffix) is None:
            return None
        return self._files.get(file)


def _lines_and_tags(file: Path, data: bytes) -> tuple[list[str], list[tags.Tag]]:
    """A file's lines and its definitions (a file of a language ``tags`` reads)."""
    language = tags.language_of(file.suffix)
    assert language is not None
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    return lines, tags.definitions(language, data)
