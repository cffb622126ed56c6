"""Workspace indexes shared by the editor sessions of one server.

Two editors on one folder (two windows, or an editor and a terminal's) would each build its
index: a walk, a parse of every file and the index's memory twice. Here one index serves
every session whose folders and indexing settings are the same; it ends when the last of them
lets go. What an index may read is decided by an exclusion of its own, configured from the
key, so no session's later settings change what another session's index holds.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from .exclusion import Exclusion
from .workspace import WorkspaceIndex


@dataclass(frozen=True, slots=True)
class IndexKey:
    """What makes two sessions' indexes the same."""

    roots: tuple[Path, ...]
    """The workspace folders, in the session's order."""
    max_files: int
    """``context.max_files``."""
    max_file_bytes: int
    """``context.max_file_bytes``."""
    exclude: tuple[str, ...]
    """``context.exclude``."""
    ignore_files: bool
    """``context.ignore_files``."""


@dataclass(slots=True)
class _Held:
    index: WorkspaceIndex
    """The shared index."""
    exclusion: Exclusion = field(repr=False)
    """What it may read (the key's settings)."""
    users: int = 0
    """Sessions holding it."""


class IndexPool:
    """The indexes in use, by key (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[IndexKey, _Held] = {}

    def __len__(self) -> int:
        """Indexes in use."""
        with self._lock:
            return len(self._held)

    def acquire(self, key: IndexKey) -> WorkspaceIndex:
        """The index for ``key``, built in the background when no session holds it yet;
        give it back with ``release``."""
        with self._lock:
            held = self._held.get(key)
            new = held is None
            if held is None:
                exclusion = Exclusion()
                exclusion.configure(key.roots, list(key.exclude), key.ignore_files)
                index = WorkspaceIndex(key.max_files, key.max_file_bytes, exclusion.allows)
                held = self._held[key] = _Held(index, exclusion)
            held.users += 1
        if new:
            held.index.set_roots(key.roots)
        return held.index

    def release(self, index: WorkspaceIndex) -> None:
        """A session no longer uses ``index``: it ends with its last user."""
        with self._lock:
            key = next((k for k, h in self._held.items() if h.index is index), None)
            if key is None:
                return
            held = self._held[key]
            held.users -= 1
            if held.users > 0:
                return
            del self._held[key]
        index.close()
