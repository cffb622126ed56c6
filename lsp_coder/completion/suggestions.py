"""The suggestion cache: answers at once while the user types along a shown suggestion."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from cachetools import TTLCache

from ..shared_types import StopReason

NOT_STORED = (StopReason.CANCELLED, StopReason.BACKEND_ERROR, StopReason.BACKEND_DOWN)
"""Stop reasons whose text does not go into the suggestion cache."""


@dataclass(frozen=True, slots=True)
class Shown:
    """A suggestion made at a cursor: the text before the cursor then, the rest of the line."""

    prefix: str
    rest_of_line: str
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """The part of a cached suggestion not typed yet."""

    remainder: str


class SuggestionCache:
    """Per-document last suggestions, bounded (LRU) and expiring (TTL). Thread-safe."""

    def __init__(self, maxsize: int = 64, ttl_s: float = 300.0) -> None:
        self._entries: TTLCache[str, list[Shown]] = TTLCache(maxsize=maxsize, ttl=ttl_s)
        self._lock = threading.Lock()

    def store(self, uri: str, prefix: str, rest_of_line: str, text: str, keep: int = 4) -> None:
        """Remember ``text`` as shown after ``prefix``; an empty text is not stored."""
        if not text.strip():
            return
        with self._lock:
            shown = [s for s in self._entries.get(uri, []) if s.prefix != prefix]
            shown.append(Shown(prefix, rest_of_line, text))
            self._entries[uri] = shown[-keep:]

    def lookup(self, uri: str, text: str, offset: int, rest_of_line: str) -> Hit | None:
        """A hit when the text before ``offset`` is a shown prefix plus a proper beginning of
        its suggestion (compared in place: a big document is not copied).

        The rest of the cursor line must be unchanged, so an edit elsewhere on the line misses.
        Typing may cross newlines of a multi-line suggestion.
        """
        with self._lock:
            shown = list(self._entries.get(uri, []))
        for entry in reversed(shown):
            if (rest_of_line != entry.rest_of_line or len(entry.prefix) > offset
                    or not text.startswith(entry.prefix)):
                continue
            typed = text[len(entry.prefix) : offset]
            if len(typed) < len(entry.text) and entry.text.startswith(typed):
                return Hit(entry.text[len(typed) :])
        return None

    def latest(self, uri: str) -> str:
        """The last suggestion stored for a document ("" if none)."""
        with self._lock:
            shown = self._entries.get(uri)
            return shown[-1].text if shown else ""

    def forget(self, uri: str) -> None:
        with self._lock:
            self._entries.pop(uri, None)
