"""The windows of other files most similar to the lines at the cursor, for the section: of
open documents, of the files of recently closed ones, of files near the open one and of the
open one beyond its prompt's window."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from cachetools import LRUCache

from ...prompt_parts import WINDOW_QUANTUM_LINES
from .cursor_lines import lines_between
from .exclusion import Exclusion
from .items import Item
from .neighbours import NeighbourFiles
from .python_defs import IMPORT_SCAN_CHARS
from .similar import CHUNK_LINES, Chunk, SimilarChunks, choose
from .text import display_uri, uri_to_path

CHUNKS_MAX = 3
"""At most this many similar windows."""

CANDIDATES_MAX = 32
"""Windows kept per block to choose from (overlapping ones included)."""

CLOSED_KEPT = 8
"""Recently closed documents whose files stay similar-window candidates (read from disk)."""

BLOCKS_KEPT = 64
"""Blocks of lines whose windows are remembered."""


class SimilarWindows:
    """Finds the similar windows for a block of lines, once per block, and keeps the files of
    recently closed documents as candidates. Thread-safe: ``opened`` and ``closed`` come from
    the event loop, ``items`` runs on the worker."""

    def __init__(self, exclusion: Exclusion) -> None:
        self._exclusion = exclusion
        self._lock = threading.Lock()
        self._closed: OrderedDict[Path, None] = OrderedDict()
        """Files of recently closed documents, the most recent last."""
        self._similar = SimilarChunks()
        self._neighbours: NeighbourFiles | None = None
        self._found: LRUCache[tuple, list[Chunk]] = LRUCache(BLOCKS_KEPT)
        """The windows to choose from, by document, block, generations and settings."""

    def opened(self, path: Path) -> None:
        """The file of a document opened again: its text comes from the document now."""
        with self._lock:
            self._closed.pop(path, None)

    def closed(self, path: Path) -> None:
        """A document closed: its file, as saved, stays a candidate among the last
        ``CLOSED_KEPT`` closed."""
        with self._lock:
            self._closed.pop(path, None)
            self._closed[path] = None
            while len(self._closed) > CLOSED_KEPT:
                self._closed.popitem(last=False)

    def forget(self) -> None:
        """What is excluded changed: every window found is looked for again."""
        with self._lock:
            self._found.clear()

    def items(self, uri: str, text: str, offset: int, line: int,
              others: list[tuple[str, str]], roots: tuple[Path, ...],
              generations: tuple[int, int], window_lines: tuple[int, int], max_bytes: int,
              near_files: bool, kept: tuple[tuple, ...] = ()) -> list[Item]:
        """The best windows for the block of lines at the cursor (``line``, ``offset`` of
        ``text``, document ``uri``), computed once per block and ``generations`` (of the
        documents, of the files on disk): typing inside the block changes nothing. Of
        ``others`` (the other documents, (uri, text)), of the files of recently closed ones,
        of the files near this one (``neighbours``, with ``near_files``) and of this one
        beyond the ``window_lines`` (above, below) the prompt shows; none of more than
        ``max_bytes`` (this one's windows are found again at each new block, so a huge
        document is left out). ``kept``: the item keys of the windows the document's last
        section showed, which count more (``similar.choose``): a section that changes makes
        the whole prompt behind it read again."""
        shown = tuple((key[1], key[2]) for key in kept if key[0] == "chunk")
        candidates = self._candidates(uri, text, offset, line, others, roots, generations,
                                      window_lines, max_bytes, near_files)
        return [Item(("chunk", chunk.uri, chunk.start_line), display_uri(chunk.uri, roots),
                     chunk.text, CHUNK_LINES // 2)
                for chunk in choose(candidates, CHUNKS_MAX, shown)]

    def _candidates(self, uri: str, text: str, offset: int, line: int,
                    others: list[tuple[str, str]], roots: tuple[Path, ...],
                    generations: tuple[int, int], window_lines: tuple[int, int],
                    max_bytes: int, near_files: bool) -> list[Chunk]:
        """The windows ``items`` chooses from for the block at ``line``, found once per
        block."""
        block = line // WINDOW_QUANTUM_LINES
        key = (uri, block, *generations, max_bytes, near_files)
        with self._lock:
            cached = self._found.get(key)
            closed = list(reversed(self._closed))
        if cached is not None:
            return cached
        query = lines_between(text, offset, line, max(0, (block - 1) * WINDOW_QUANTUM_LINES),
                              (block + 1) * WINDOW_QUANTUM_LINES)
        path = uri_to_path(uri)
        documents = list(others)
        if max_bytes > 0:
            if self._neighbours is None or self._neighbours.max_file_bytes != max_bytes:
                self._neighbours = NeighbourFiles(max_bytes, self._exclusion.allows)
            skip = {uri_to_path(u) for u, _ in others} | {path}
            for file in closed:
                body = None if file in skip else self._neighbours.read(file)
                if body is not None:
                    documents.append((file.as_uri(), body))
                    skip.add(file)
            if near_files and path is not None:
                near = self._neighbours.near(path, text[:IMPORT_SCAN_CHARS], roots, skip)
                documents += [(file.as_uri(), body) for file, body in near]
        if len(text) <= max_bytes:
            documents.append((uri, text))
        hidden = (uri, line - window_lines[0], line + window_lines[1] + 1)
        candidates = self._similar.candidates(query, documents, CANDIDATES_MAX, hidden)
        with self._lock:
            self._found[key] = candidates
        return candidates
