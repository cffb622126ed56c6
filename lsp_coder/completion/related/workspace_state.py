"""The state other files' context keeps from the editor's events: the open documents, the
workspace folders and what is excluded, the workspace index, and each document's remembered
sections; the events (event loop) only record, the worker reads it under one lock."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from cachetools import LRUCache

from ...config import Config
from .bounded import BoundedCalls
from .definitions import DefinitionFinder
from .exclusion import Exclusion
from .index_pool import HeldIndex, IndexPool
from .items import Item
from .section_text import place
from .text import uri_to_path
from .windows import SimilarWindows
from .workspace import WorkspaceIndex

OPEN_DOCUMENTS_MAX = 32
"""Open or recently edited documents ranked for similar windows (most recent first)."""

SECTIONS_KEPT = 64
"""Documents whose last section is remembered (to keep it while it still serves)."""

FILES_LIMIT_S = 5.0
"""The worker waits at most this long for the section, or to know whether a document is
excluded (``bounded``: a file on a hung network mount)."""

NOT_ANSWERING = "its folder does not answer (a hung network mount?)"
"""Why a document is refused when whether it is excluded cannot be known in time."""


class WorkspaceState:
    """Tracks open documents and the workspace for ``RelatedContext`` (which builds the
    sections from it).

    ``opened``, ``saved``, ``closed``, ``files_changed`` and ``set_roots`` come from the event
    loop and only record; ``excluded`` runs on the worker, waiting at most ``FILES_LIMIT_S``
    for the ignore files (``bounded``). ``indexes``: where its workspace index comes from (the
    server's, shared with its other sessions; default: its own).
    """

    def __init__(self, indexes: IndexPool | None = None) -> None:
        self._lock = threading.Lock()
        self._documents: OrderedDict[str, str] = OrderedDict()
        self._roots: tuple[Path, ...] = ()
        self.exclusion = Exclusion()
        """What never reaches the model (configured from the folders and the settings)."""
        self._held = HeldIndex(indexes if indexes is not None else IndexPool())
        """The workspace index for the folders and the settings."""
        self._definitions = DefinitionFinder(self.exclusion.allows)
        self._windows = SimilarWindows(self.exclusion)
        self._sections: LRUCache[str, list[Item]] = LRUCache(SECTIONS_KEPT)
        self._shown: LRUCache[str, list[Item]] = LRUCache(SECTIONS_KEPT)
        """Per document, the section of the prompt a request last read (``shown``)."""
        self._bounded_section = BoundedCalls(FILES_LIMIT_S, "reading other files for context")
        self._bounded_exclusion = BoundedCalls(FILES_LIMIT_S, "reading ignore files")
        self._generation = 0
        self._files_generation = 0
        """Grows when files change on disk (their definitions are read again)."""

    # -- events (event loop) --------------------------------------------------------------------

    def set_roots(self, folders: list[str], config: Config) -> None:
        """The workspace folders (URIs or paths); indexing starts in the background."""
        roots = []
        for folder in folders:
            path = uri_to_path(folder) if "://" in folder else Path(folder)
            if path is not None:
                roots.append(path)
        with self._lock:
            self._roots = tuple(dict.fromkeys(roots))
            self._generation += 1
        self._exclude(config)
        self._use_index(config)

    def _use_index(self, config: Config) -> None:
        """Hold the workspace index for the folders and the settings (``HeldIndex.use``)."""
        with self._lock:
            roots = self._roots
        self._held.use(roots, config.context)

    def _exclude(self, config: Config) -> None:
        """Take the folders and ``[context] exclude``; when what is excluded changed, what
        was found before is forgotten (the index for the new settings is another one:
        ``_use_index``)."""
        with self._lock:
            roots = self._roots
        if not self.exclusion.configure(roots, config.context.exclude,
                                         config.context.ignore_files):
            return
        with self._lock:
            self._generation += 1
            self._files_generation += 1
            self._sections.clear()
            self._shown.clear()
        self._windows.forget()

    def excluded(self, uri: str, config: Config) -> str | None:
        """Why the document ``uri`` must never reach the model (None when it may; refused
        when its ignore files do not answer in time)."""
        path = uri_to_path(uri)
        if path is None:
            return None

        def reason() -> str | None:
            self._exclude(config)
            return self.exclusion.reason(path)

        return self._bounded_exclusion.run(reason, NOT_ANSWERING)

    def opened(self, uri: str, text: str) -> None:
        """A document was opened (or its text seen): it joins the similar-window candidates."""
        path = uri_to_path(uri)
        if path is not None:
            self._windows.opened(path)
        with self._lock:
            before = self._documents.get(uri)
            self._remember(uri, text)
            if before != text:  # a save of the text a request just read changes nothing
                self._generation += 1

    def saved(self, uri: str, text: str | None) -> None:
        """A document was saved: its new text counts, and the index reads the file again."""
        if text is not None:
            self.opened(uri, text)
        path = uri_to_path(uri)
        if path is not None:
            self.files_changed([path])

    def files_changed(self, paths: list[Path]) -> None:
        """Files changed on disk (created, changed, deleted): index them again, and their
        definitions leave the sections that show them (read again when still needed)."""
        changed = set(paths)
        with self._lock:
            self._files_generation += 1
            self._purge(lambda item: item.key[0] == "def" and item.key[1] in changed)
        index = self._held.index
        if index is not None and paths:
            index.refresh(paths)

    def closed(self, uri: str) -> None:
        """A document closed: its section is forgotten and its text leaves the candidates;
        its file, as saved, stays one (a recently edited file) among the last
        ``windows.CLOSED_KEPT`` closed."""
        path = uri_to_path(uri)
        with self._lock:
            self._documents.pop(uri, None)
            self._sections.pop(uri, None)
            self._shown.pop(uri, None)
            self._generation += 1
            if path is not None:
                self._windows.closed(path)
            self._purge(lambda item: item.key[0] == "chunk" and item.key[1] == uri)

    def _remember(self, uri: str, text: str) -> None:
        """``text`` as the most recent of the documents (the lock is held)."""
        self._documents.pop(uri, None)
        self._documents[uri] = text
        while len(self._documents) > OPEN_DOCUMENTS_MAX:
            self._documents.popitem(last=False)

    def _purge(self, gone) -> None:
        """Drop the items ``gone`` says no longer exist from every remembered section (the
        lock is held): a section is kept only while its items are still there to show."""
        for sections in (self._sections, self._shown):
            for uri, items in list(sections.items()):
                if any(gone(item) for item in items):
                    sections[uri] = [item for item in items if not gone(item)]

    def close(self) -> None:
        """The session ended: its workspace index is given back (it ends with its last
        user)."""
        self._held.close()

    def place(self, uri: str) -> tuple[str, str]:
        """(the workspace folder's name or "", the path a prompt writes) of document ``uri``."""
        with self._lock:
            roots = self._roots
        return place(uri, roots)

    @property
    def index(self) -> WorkspaceIndex | None:
        """The workspace index (None before folders were set with indexing on)."""
        return self._held.index
