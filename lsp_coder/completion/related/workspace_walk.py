"""The workspace index's walk: which source files of the workspace folders it reads.

Breadth first, in name order; ``.gitignore``'d, hidden and vendored folders left out, symbolic
links to folders not followed (a link loop is never entered), and bounded: a folder of
100,000 files costs a walk of at most ``WALK_ENTRIES_PER_FILE`` entries per file it may read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from . import tags

VENDORED = frozenset({
    "node_modules", "bower_components", "vendor", "third_party", "site-packages", "venv",
    "env", "build", "dist", "out", "target", "__pycache__", "Pods", "_build"})
"""Folders never indexed (besides hidden ones, whose names start with a dot)."""

WALK_ENTRIES_PER_FILE = 20
"""The walk stops after this many directory entries per file it may index."""


def source_files(roots: tuple[Path, ...], max_files: int, allows: Callable[[Path], bool],
                 stopped: Callable[[], bool]) -> list[Path]:
    """Source files under ``roots``, breadth first: at most ``max_files`` that ``allows``
    lets through, after at most ``WALK_ENTRIES_PER_FILE`` entries per file; ``stopped``
    (asked before each folder) ends the walk early."""
    from pathspec import GitIgnoreSpec

    found: list[Path] = []
    budget = WALK_ENTRIES_PER_FILE * max(1, max_files)
    queue: list[tuple[Path, list[tuple[Path, GitIgnoreSpec]]]] = [(r, []) for r in roots]
    while queue and len(found) < max_files and budget > 0 and not stopped():
        folder, ignores = queue.pop(0)
        try:
            ignore_file = folder / ".gitignore"
            if ignore_file.is_file() and ignore_file.stat().st_size < 1 << 20:
                spec = GitIgnoreSpec.from_lines(
                    ignore_file.read_text("utf-8", "replace").splitlines())
                ignores = ignores + [(folder, spec)]
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in listed:
            budget -= 1
            if budget <= 0 or len(found) >= max_files:
                break
            if entry.name.startswith(".") or entry.name in VENDORED:
                continue
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if not (is_dir or (is_file and tags.language_of(path.suffix))):
                continue
            if _ignored(path, is_dir, ignores) or (not is_dir and not allows(path)):
                continue
            if is_dir:
                queue.append((path, ignores))
            else:
                found.append(path)
    return found


def _ignored(path: Path, is_dir: bool, ignores: list) -> bool:
    for base, spec in ignores:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False
