"""A bounded index of the definitions in the workspace folders, built in the background.

A thread walks the folders (``workspace_walk``: source files only; ``.gitignore``'d, hidden
and vendored folders left out; symbolic links to folders not followed, so a link loop is never
entered) and a subprocess parses the files with tree-sitter (``parse_worker``), so a parse
never holds this process's GIL (the event loop and the inference worker keep running). New
folders stop the build of the old ones within a batch, and closing the index ends the
subprocess. At most ``max_files`` files of at most ``max_file_bytes`` are read, and the walk
is bounded by the files it may read, so a folder of 100,000 files costs a bounded walk.
Unreadable, binary, vanished, oversized or irregular files (a FIFO, a device) are left out
silently. The index keeps names and line numbers only, never file text.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import tags
from .parse_worker import ParseWorker, WorkerGone, parse_files
from .workspace_walk import source_files

log = logging.getLogger(__name__)

BATCH_FILES = 64
"""Files sent to the parsing subprocess at a time."""

IN_THREAD_FILES = 8
"""A refresh of at most this many files is parsed in the index thread (no subprocess)."""

@dataclass(frozen=True, slots=True)
class IndexStats:
    """What the index holds and what building it cost."""

    files: int
    """Files indexed."""
    definitions: int
    """Definitions found in them."""
    build_ms: float
    """Wall time of the last full build (0 before one finished)."""
    ready: bool
    """Whether a full build has finished since the folders were last set."""
    parsed: int = 0
    """Files parsed so far, by every build and refresh (finished or stopped)."""


class WorkspaceIndex:
    """Names -> definitions in the workspace folders; safe to read from any thread.

    Args:
        max_files: most files indexed.
        max_file_bytes: larger files are not read.
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, max_files: int, max_file_bytes: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self.max_files = max_files
        self.max_file_bytes = max_file_bytes
        self._allows = allows
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._roots: tuple[Path, ...] = ()
        self._rescan = False
        self._pending: set[Path] = set()
        self._files: dict[Path, list[tags.Tag]] = {}
        self._names: dict[str, list[Path]] = {}
        self._build_ms = 0.0
        self._ready = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._worker = ParseWorker()
        self._parsed = 0
        self.generation = 0
        """Grows whenever what the index holds changes (a build or a refresh finished)."""

    # -- control (any thread) -------------------------------------------------------------------

    def set_roots(self, roots: tuple[Path, ...]) -> None:
        """Index these folders (from scratch, in the background)."""
        with self._wake:
            if roots == self._roots and self._thread is not None:
                return
            self._roots, self._rescan, self._ready = roots, True, False
            self._wake.notify()
        self._start()

    def rebuild(self) -> None:
        """Index the same folders again from scratch (what may be read changed)."""
        with self._wake:
            self._rescan, self._ready = True, False
            self._wake.notify()
        self._start()

    def refresh(self, paths: list[Path]) -> None:
        """These files changed, appeared or vanished: index them again in the background."""
        with self._wake:
            self._pending.update(p for p in paths if self._under_roots(p))
            self._wake.notify()
        self._start()

    def close(self) -> None:
        """Stop: the build in progress ends, and the parsing process with it."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._worker.close()

    # -- reading (any thread) -------------------------------------------------------------------

    def lookup(self, name: str) -> list[tuple[Path, tags.Tag, list[tags.Tag]]]:
        """Where ``name`` is defined: (file, its tag, all the file's tags), in path order."""
        with self._lock:
            files = list(self._names.get(name, ()))
            found = [(path, self._files.get(path, [])) for path in files]
        out = []
        for path, file_tags in sorted(found):
            out += [(path, t, file_tags) for t in file_tags if t.name == name]
        return out

    @property
    def parser_pid(self) -> int | None:
        """The parsing process's id while one runs (during a build), else None."""
        return self._worker.pid

    def holds(self, name: str) -> bool:
        """Whether some indexed file defines ``name`` (a dict lookup: cheap per keystroke)."""
        return name in self._names

    def stats(self) -> IndexStats:
        with self._lock:
            return IndexStats(len(self._files), sum(len(t) for t in self._files.values()),
                              self._build_ms, self._ready, self._parsed)

    def wait_ready(self, timeout_s: float) -> bool:
        """Block until a full build finished (for tests and the bench)."""
        deadline = time.monotonic() + timeout_s
        with self._wake:
            while not self._ready:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(left)
            return True

    # -- the index thread -----------------------------------------------------------------------

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None or self._closed:
                return
            self._thread = threading.Thread(target=self._run, name="lsp-coder-index",
                                            daemon=True)
            self._thread.start()

    def _under_roots(self, path: Path) -> bool:
        return any(path.is_relative_to(root) for root in self._roots)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not (self._closed or self._rescan or self._pending):
                    self._wake.wait()
                if self._closed:
                    return
                rescan, roots = self._rescan, self._roots
                pending, self._pending, self._rescan = self._pending, set(), False
            try:
                if rescan:
                    self._build(roots)
                if pending:
                    self._update(sorted(pending))
            except Exception as exc:  # the index is a bonus: never take the server down
                log.warning("workspace index: %s", type(exc).__name__)

    def _build(self, roots: tuple[Path, ...]) -> None:
        start = time.perf_counter()
        files: dict[Path, list[tags.Tag]] = {}
        try:
            paths = source_files(roots, self.max_files, self._allows,
                                 lambda: self._stale(roots))
            files = self._parse(paths, roots)
        finally:  # even a failed build ends (with what it has), so nobody waits for it
            self._publish(roots, files, start)

    def _publish(self, roots: tuple[Path, ...], files: dict[Path, list[tags.Tag]],
                 start: float) -> None:
        names: dict[str, list[Path]] = {}
        for path, file_tags in files.items():
            for name in {t.name for t in file_tags}:
                names.setdefault(name, []).append(path)
        with self._wake:
            if self._roots != roots:
                return  # the folders changed meanwhile: the next build replaces this one
            self._files, self._names = files, names
            self._build_ms = (time.perf_counter() - start) * 1000
            self._ready = True
            self.generation += 1
            self._wake.notify_all()

    def _update(self, paths: list[Path]) -> None:
        parsed = self._parse([p for p in paths if p.is_file() and self._allows(p)])
        with self._lock:
            for path in paths:
                for name in {t.name for t in self._files.pop(path, [])}:
                    holders = self._names.get(name, [])
                    if path in holders:
                        holders.remove(path)
                if path in parsed and len(self._files) < self.max_files:
                    self._files[path] = parsed[path]
                    for name in {t.name for t in parsed[path]}:
                        self._names.setdefault(name, []).append(path)
            self.generation += 1

    def _parse(self, paths: list[Path], roots: tuple[Path, ...] | None = None
               ) -> dict[Path, list[tags.Tag]]:
        """Tags of ``paths``; a build for ``roots`` stops once those are no longer the
        folders (``_stale``), with what it has."""
        names = [str(p) for p in paths]
        if len(names) <= IN_THREAD_FILES:
            return self._parse_here(names, roots)
        out: dict[Path, list[tags.Tag]] = {}
        batches = [names[i : i + BATCH_FILES] for i in range(0, len(names), BATCH_FILES)]
        try:
            while batches and not self._stale(roots):
                for name, file_tags in self._worker.parse(batches[0], self.max_file_bytes):
                    out[Path(name)] = file_tags
                    self._parsed += 1
                batches.pop(0)
        except WorkerGone as exc:
            if self._closed:
                return out
            log.info("workspace index: parsing here (%s)", exc)
            for batch in batches:
                out.update(self._parse_here(batch, roots))
        finally:
            self._worker.close()  # its memory goes back until the next build
        return out

    def _parse_here(self, names: list[str], roots: tuple[Path, ...] | None = None
                    ) -> dict[Path, list[tags.Tag]]:
        """Parse in this thread, one file at a time, letting other threads run in between
        (a parse holds the GIL for up to some tens of milliseconds)."""
        out: dict[Path, list[tags.Tag]] = {}
        for name in names:
            if self._stale(roots):
                break
            out.update((Path(n), t) for n, t in parse_files([name], self.max_file_bytes))
            self._parsed += 1
            time.sleep(0)
        return out

    def _stale(self, roots: tuple[Path, ...] | None) -> bool:
        """Whether work for ``roots`` (None: a refresh) is no longer wanted: the index closed,
        or other folders were set since it began."""
        return self._closed or (roots is not None and roots != self._roots)
