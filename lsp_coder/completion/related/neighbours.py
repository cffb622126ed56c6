"""Files near the open document, read from disk for similar windows: the workspace modules it
imports (Python) and the other files of its folder in the same language family, inside the
workspace folders only.

Like a neighbouring tab the user never opened: the code most likely to show how the names the
cursor needs are used. Bounded (``NEIGHBOURS_MAX`` files, each at most ``max_file_bytes``) and
read again only when a file's size or time changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..context import one_line_end
from . import tags
from .python_defs import IMPORT_START, find_module, imports, search_roots
from .text import FileReads

NEIGHBOURS_MAX = 8
"""At most this many files near the document are read (imported ones first)."""

FOLDER_SCAN_MAX = 256
"""At most this many entries of the document's folder are looked at."""

TEXTS_KEPT = 64
"""Files whose text is kept between requests (the ones read last)."""


class NeighbourFiles:
    """Finds and reads the files near a document (worker thread).

    Args:
        max_file_bytes: a larger file is not read.
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, max_file_bytes: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self.max_file_bytes = max_file_bytes
        self._texts = FileReads(
            max_file_bytes, lambda _file, data: one_line_end(data.decode("utf-8", "replace")),
            TEXTS_KEPT, allows)

    def near(self, path: Path, head: str, roots: tuple[Path, ...],
             skip: set[Path]) -> list[tuple[Path, str]]:
        """(path, text) of the files near ``path`` whose start is ``head`` (its imports):
        imported workspace modules first, then its folder's files of the same language family
        by name; none in ``skip`` (open documents, the document itself). Only files inside
        the workspace folders ``roots``, and none for a document outside them (a script in
        ``/tmp`` or the home folder has no neighbours worth reading)."""
        language = tags.language_of(path.suffix)
        if language is None or not _inside(path, roots):
            return []
        family = tags.family(language)
        wanted: list[Path] = []
        if language == "python":
            wanted += _imported_files(path, head, roots)
        wanted += _folder_files(path, family)
        out: list[tuple[Path, str]] = []
        for file in dict.fromkeys(wanted):
            if file == path or file in skip or not _inside(file, roots):
                continue
            text = self.read(file)
            if text is not None and not (language == "python" and _imports_only(text)):
                out.append((file, text))
                if len(out) >= NEIGHBOURS_MAX:
                    break
        return out

    def read(self, file: Path) -> str | None:
        """The file's text, or None when it cannot be read, is too large, binary, not a
        regular file or excluded."""
        return self._texts.get(file)


def _imported_files(path: Path, head: str, roots: tuple[Path, ...]) -> list[Path]:
    """The workspace files that the imports in ``head`` name (a module, or the submodule a
    ``from pkg import mod`` takes), in import order."""
    search = search_roots(path, roots)
    out = []
    for target in imports(head).values():
        file = None
        if target.attr:
            sub = f"{target.module}.{target.attr}" if target.module else target.attr
            file = find_module(sub, target.level, path.parent, search)
        if file is None:
            file = find_module(target.module, target.level, path.parent, search)
        if file is not None and file.name != "__init__.py":
            out.append(file)
    return out


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _imports_only(text: str) -> bool:
    """Whether a Python file only imports (a package's ``__init__``: nothing to show)."""
    return not any(line.strip() and not IMPORT_START.match(line)
                   and not line.lstrip().startswith(("#", ")", '"""', "__all__"))
                   for line in text.splitlines())


def _folder_files(path: Path, family: str) -> list[Path]:
    """The document's folder's files of language ``family``, by name."""
    found = []
    try:
        with os.scandir(path.parent) as entries:
            for i, entry in enumerate(entries):
                if i >= FOLDER_SCAN_MAX:
                    break
                language = tags.language_of(Path(entry.name).suffix)
                if language is None or tags.family(language) != family:
                    continue
                if entry.is_file(follow_symlinks=False):
                    found.append(Path(entry.path))
    except OSError:
        return []
    return sorted(found)
