"""Chunks of other documents that share the most identifiers with the lines at the cursor.

Like a neighbouring tab: each open or recently edited document is cut into windows of
``CHUNK_LINES`` lines on fixed line numbers, and the windows are ranked by the Jaccard
similarity of their identifier sets with the lines around the cursor. A document's windows
are computed once per text (the worker reads them again only after that document changed).
"""

from __future__ import annotations

from dataclasses import dataclass

from cachetools import LRUCache

from .text import identifiers

CHUNK_LINES = 20
"""Lines per window."""

CHUNK_STRIDE = 10
"""Windows start every this many lines (they overlap by half)."""

MIN_SCORE = 0.08
"""Below this similarity a window is not worth its tokens."""

MAX_DOCUMENT_CHARS = 1_000_000
"""A longer document is not cut into windows (its text is not scanned)."""

IGNORED = frozenset(
    "self this return def function const let var if else elif for while in is not and or "
    "None null true false True False import from class new int str void public private static "
    "end then do local fn pub use struct impl func type package".split())
"""Words too common across languages to say two pieces of code are related."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A window of a document."""

    uri: str
    """The document."""
    start_line: int
    """Its first line (0-based)."""
    text: str
    """Its lines."""
    score: float
    """Similarity with the lines at the cursor (0 to 1)."""


def words(text: str) -> frozenset[str]:
    """The identifiers of ``text`` that can tell related code apart."""
    return frozenset(w for w in identifiers(text) if len(w) > 1 and w not in IGNORED)


class SimilarChunks:
    """Ranks windows of documents by identifier overlap (worker thread)."""

    def __init__(self) -> None:
        self._windows: LRUCache[str, tuple[str, list[tuple[int, frozenset[str]]]]] = (
            LRUCache(maxsize=64))

    def rank(self, query: str, documents: list[tuple[str, str]], limit: int,
             skip: tuple[str, int, int] | None = None) -> list[Chunk]:
        """The best ``limit`` windows of ``documents`` ((uri, text) pairs) for ``query``,
        best first, at most one of two overlapping windows; ties by document and line.
        ``skip``: (uri, first line, end line): no window of that document overlapping those
        lines (what the prompt already shows of the open document)."""
        wanted = words(query)
        if not wanted:
            return []
        scored: list[tuple[float, str, int]] = []
        for uri, text in documents:
            for start, found in self._windows_of(uri, text):
                if skip is not None and uri == skip[0] and (
                        start < skip[2] and start + CHUNK_LINES > skip[1]):
                    continue
                union = len(wanted | found)
                score = len(wanted & found) / union if union else 0.0
                if score >= MIN_SCORE:
                    scored.append((score, uri, start))
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        texts = dict(documents)
        taken: list[Chunk] = []
        for score, uri, start in scored:
            if any(c.uri == uri and abs(c.start_line - start) < CHUNK_LINES for c in taken):
                continue
            lines = texts[uri].splitlines(keepends=True)[start : start + CHUNK_LINES]
            taken.append(Chunk(uri, start, "".join(lines), score))
            if len(taken) >= limit:
                break
        return taken

    def _windows_of(self, uri: str, text: str) -> list[tuple[int, frozenset[str]]]:
        cached = self._windows.get(uri)
        if cached is not None and cached[0] == text:
            return cached[1]
        windows: list[tuple[int, frozenset[str]]] = []
        if len(text) <= MAX_DOCUMENT_CHARS:
            lines = text.splitlines()
            for start in range(0, max(1, len(lines) - CHUNK_STRIDE), CHUNK_STRIDE):
                windows.append((start, words("\n".join(lines[start : start + CHUNK_LINES]))))
        self._windows[uri] = (text, windows)
        return windows
