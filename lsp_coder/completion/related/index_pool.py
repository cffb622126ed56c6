"""Workspace indexes shared by the editor sessions of one server.

Two editors on one folder (two windows, or an editor and a terminal's) would each build its
index: a walk, a parse of every file and the index's memory twice. Here one index serves
every session whose folders and indexing settings are the same; it ends when the last of them
lets go. What an index may read is decided by an exclusion of its own, configured from the
key, so no session's later settings change what another session's index holds.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from ...config import ContextConfig
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
    """The shared index (what it may read: an exclusion made from its key)."""
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
                held = self._held[key] = _Held(index)
            held.users += 1
        if new:
            held.index.set_roots(key.roots)
        return held.index

    def release(self, key: IndexKey) -> None:
        """A session no longer uses the index for ``key``: it ends with its last user."""
        with self._lock:
            held = self._held.get(key)
            if held is None:
                return
            held.users -= 1
            if held.users > 0:
                return
            del self._held[key]
        held.index.close()


class HeldIndex:
    """One session's hold on the pool's index for its folders and settings (any thread)."""

    def __init__(self, pool: IndexPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._index: WorkspaceIndex | None = None
        self._key: IndexKey | None = None
        self._ended = False
        """``close`` was called: no index is taken any more."""

    @property
    def index(self) -> WorkspaceIndex | None:
        """The index held (None where indexing is off, or before folders were set)."""
        return self._index

    def use(self, roots: tuple[Path, ...], cc: ContextConfig) -> None:
        """Hold the index for ``roots`` and the settings ``cc`` (giving back the one held
        before), or none where indexing is off; cheap when they did not change."""
        key = (IndexKey(roots, cc.max_files, cc.max_file_bytes, tuple(cc.exclude),
                        cc.ignore_files)
               if cc.workspace and roots and cc.max_files > 0 else None)
        with self._lock:
            if key == self._key or self._ended:
                return
            old, self._key = self._key, key
            self._index = None if key is None else self._pool.acquire(key)
        if old is not None:
            self._pool.release(old)

    def close(self) -> None:
        """Give the index back for good (it ends with its last user)."""
        with self._lock:
            key, self._index, self._key = self._key, None, None
            self._ended = True
        if key is not None:
            self._pool.release(key)
