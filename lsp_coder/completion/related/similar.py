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

KEPT_BONUS = 2.0
"""A window the section showed last time counts this many times its similarity (``choose``):
it stays down to half of ``MIN_SCORE`` and until a window twice as similar takes its place.
At a block's boundary windows of about the same similarity trade places, and a section that
changes makes the whole prompt behind it read again."""

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

    def candidates(self, query: str, documents: list[tuple[str, str]], limit: int,
                   skip: tuple[str, int, int] | None = None) -> list[Chunk]:
        """The ``limit`` windows of ``documents`` ((uri, text) pairs) most similar to
        ``query``, best first, overlapping ones included (``choose`` picks among them); none
        below half of ``MIN_SCORE`` (a window shown last time may stay down to there); ties
        by document and line. ``skip``: (uri, first line, end line): no window of that
        document overlapping those lines (what the prompt already shows of the open
        document)."""
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
                if score * KEPT_BONUS >= MIN_SCORE:
                    scored.append((score, uri, start))
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        texts = dict(documents)
        lines: dict[str, list[str]] = {}
        out: list[Chunk] = []
        for score, uri, start in scored[:limit]:
            if uri not in lines:
                lines[uri] = texts[uri].splitlines(keepends=True)
            out.append(Chunk(uri, start, "".join(lines[uri][start : start + CHUNK_LINES]),
                             score))
        return out

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


def choose(candidates: list[Chunk], limit: int, kept: tuple[tuple[str, int], ...] = ()
           ) -> list[Chunk]:
    """At most ``limit`` of ``candidates`` (``SimilarChunks.candidates``), best first, at most
    one of two overlapping windows, none below ``MIN_SCORE``; a window of ``kept`` ((uri,
    first line) of those the section showed last time) counts ``KEPT_BONUS`` times its
    similarity."""
    shown = set(kept)

    def weight(chunk: Chunk) -> float:
        return chunk.score * (KEPT_BONUS if (chunk.uri, chunk.start_line) in shown else 1.0)

    taken: list[Chunk] = []
    for chunk in sorted(candidates, key=lambda c: (-weight(c), c.uri, c.start_line)):
        if weight(chunk) < MIN_SCORE:
            break
        if any(c.uri == chunk.uri and abs(c.start_line - chunk.start_line) < CHUNK_LINES
               for c in taken):
            continue
        taken.append(chunk)
        if len(taken) >= limit:
            break
    return taken
