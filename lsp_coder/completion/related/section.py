"""The other files' section of the prompt: what the cursor uses, from where it is defined.

Sources, in the order they fill the budget: the definitions of the names used at the cursor
(``definitions``: Python, JavaScript and TypeScript by their imports, every language by the
workspace index), then the windows most similar to the lines at the cursor, of open documents,
of recently closed ones (as saved on disk), of the open one beyond its prompt's window and of
files near it (``neighbours``). The section sits first in the prompt, so a change re-reads the
whole prompt: it is recomputed only when what the cursor needs changes and otherwise kept as
it was (see ``RelatedContext.section``). No source reads a file the user excludes or one that
holds secrets (``exclusion``), and no excluded document's text is shown.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from cachetools import LRUCache

from ...config import Config
from ..context import CHARS_PER_TOKEN
from .bounded import BoundedCalls
from .cursor_lines import lines_above, lines_by_distance
from .definitions import DefinitionFinder
from .exclusion import Exclusion
from .index_pool import HeldIndex, IndexPool
from .items import Item, fit_items, kept_stable
from .js_paths import relative_path_typed
from .pinned import pinned_entries, pinned_tokens
from .section_text import Section, place, rendered
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


class RelatedContext:
    """Tracks open documents and the workspace, and builds each request's section.

    ``opened``, ``saved``, ``closed``, ``files_changed`` and ``set_roots`` come from the event
    loop and only record; ``section`` and ``excluded`` run on the worker, each waiting at most
    ``FILES_LIMIT_S`` for the files it reads (``bounded``). ``indexes``: where its workspace
    index comes from (the server's, shared with its other sessions; default: its own).
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

    # -- the section (worker) -------------------------------------------------------------------

    def section(self, uri: str, text: str, offset: int, budget_tokens: int, config: Config,
                record: bool = True, window_lines: tuple[int, int] = (0, 0),
                first_answer: str = "") -> Section:
        """The other files' section for a request at ``offset`` of ``text`` (document ``uri``);
        empty when reading the files takes over ``FILES_LIMIT_S`` (see ``_section``)."""
        return self._bounded_section.run(
            lambda: self._section(uri, text, offset, budget_tokens, config, record,
                                  window_lines, first_answer), Section())

    def _section(self, uri: str, text: str, offset: int, budget_tokens: int, config: Config,
                 record: bool, window_lines: tuple[int, int], first_answer: str) -> Section:
        """The other files' section for a request at ``offset`` of ``text`` (document ``uri``).

        Stability: when everything the cursor needs now is already in the document's last
        section, that section is returned unchanged; otherwise the items still needed keep
        their order and the new ones follow. ``record``: remember the result as the
        document's section (False for a preview by idle work). ``window_lines``: the lines
        above and below the cursor line that the prompt holds (no window of them is repeated
        here). ``first_answer``: an answer at the cursor whose names are looked up as if typed
        (``context.second_pass``; the similar windows and the remembered text stay the
        document's own).
        """
        cc = config.context
        pinned = pinned_entries(cc.pinned)
        budget = (budget_tokens - pinned_tokens(pinned)) * CHARS_PER_TOKEN
        if (budget <= 0 or not (cc.definitions or cc.open_files)) and not pinned:
            return Section()
        self._exclude(config)
        self._use_index(config)
        with self._lock:
            roots, generation = self._roots, self._generation
            files_generation = self._files_generation
            others = [(u, t) for u, t in reversed(self._documents.items()) if u != uri]
            previous = self._sections.get(uri)
            if record:  # the most recently edited document; no other section changes for it
                self._remember(uri, text)
        others = [(u, t) for u, t in others if self.exclusion.allows_uri(u)]
        path = uri_to_path(uri)
        line = text.count("\n", 0, offset)
        items: list[Item] = []
        outlines: list[Item] = []
        if cc.definitions and budget > 0:
            looked, at = ((text[:offset] + first_answer + text[offset:],
                           offset + len(first_answer)) if first_answer else (text, offset))
            found = self._definitions.items(looked, lines_above(looked, at),
                                            lines_by_distance(looked, at), path, roots,
                                            cc.max_file_bytes, self._held.index,
                                            files_generation, cc.unused_imports)
            items += [item for item in found if not item.outline]
            outlines = [item for item in found if item.outline]
        if cc.open_files and budget > 0:
            items += self._windows.items(uri, text, offset, line, others, roots,
                                         (generation, files_generation), window_lines,
                                         cc.max_file_bytes, cc.workspace,
                                         tuple(item.key for item in previous or ()))
        # A module's outline is a guess at what comes after its dot; a window of code that
        # shares the cursor's names was measured to be worth more, so outlines get what is left.
        items += outlines
        wanted = fit_items(items, budget)
        # An ignore file may have changed since an item was found: none that is excluded now.
        chosen = [i for i in kept_stable(previous, wanted)
                  if self.exclusion.allows_uri(i.key[1])]
        if record:
            with self._lock:
                self._sections[uri] = chosen
        return rendered(uri, roots, pinned, chosen, cc.relevant_last)

    def members(self, uri: str, text: str, offset: int, config: Config
                ) -> dict[str, frozenset[str]]:
        """The names each name the document imports from the workspace offers after its dot
        (``context.known_members``; ``DefinitionFinder.members``); none when reading the
        files takes over ``FILES_LIMIT_S``."""
        cc = config.context
        if not cc.known_members:
            return {}
        with self._lock:
            roots, files_generation = self._roots, self._files_generation
            open_texts = {path: t for u, t in self._documents.items()
                          if u != uri and (path := uri_to_path(u)) is not None}
        return self._bounded_section.run(
            lambda: self._definitions.members(text, lines_above(text, offset),
                                              uri_to_path(uri), roots, cc.max_file_bytes,
                                              files_generation, open_texts), {})

    def import_path_mender(self, uri: str, line_before: str, config: Config
                           ) -> Callable[[str], str | None] | None:
        """What mends an answer's first line where the cursor line (``line_before``) ends in
        the relative path of an import (``DefinitionFinder.mend_import_path``, bounded as
        reading other files is); None where it ends in none or ``context.known_members`` is
        off."""
        path = uri_to_path(uri)
        if not config.context.known_members or path is None or (
                not relative_path_typed(line_before)):
            return None
        with self._lock:
            roots, files_generation = self._roots, self._files_generation

        def mend(answer_line: str) -> str | None:
            return self._bounded_section.run(
                lambda: self._definitions.mend_import_path(line_before, answer_line, path,
                                                           roots, files_generation), None)
        return mend

    # -- the section the cache holds (worker) ---------------------------------------------------

    def shown(self, uri: str) -> None:
        """A request for ``uri`` read a prompt with the document's recorded section: the
        backend's cache holds it now."""
        with self._lock:
            recorded = self._sections.get(uri)
            if recorded is not None:
                self._shown[uri] = recorded

    def held(self, uri: str, budget_tokens: int, config: Config) -> Section | None:
        """The section of the prompt a request for ``uri`` last read (``shown``), for a
        backend whose cache lacks the prompt with a new one (see ``PromptParts.held_extra``):
        None when there is none, or it no longer fits ``budget_tokens``; no item that is
        excluded now."""
        cc = config.context
        pinned = pinned_entries(cc.pinned)
        budget = (budget_tokens - pinned_tokens(pinned)) * CHARS_PER_TOKEN
        with self._lock:
            shown, roots = self._shown.get(uri), self._roots
        if not shown:
            return None
        items = [i for i in shown if self.exclusion.allows_uri(i.key[1])]
        if fit_items(items, budget) != items:  # it no longer fits whole
            return None
        return rendered(uri, roots, pinned, items, cc.relevant_last)
