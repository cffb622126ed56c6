"""How long a typing request waits before the engine starts on it.

No wait when the client already spaces its requests (e.g. Neovim's 200 ms) or the user types
slowly; the full ceiling while the user types fast; half of it when answers have been fast
recently, since a wasted start then costs little. On a shared serving engine a wasted start
costs everyone: always the full ceiling.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

FAST_ANSWER_MS = 150.0
"""Answers faster than this (smoothed) halve the wait."""
LONGEST_INTERVAL_MS = 2000.0
"""A longer pause between requests counts as this long in the smoothed interval."""


@dataclass(slots=True)
class DocTiming:
    """How fast requests come for one document."""

    last_request: float = 0.0
    """When the last one came (monotonic seconds)."""
    interval_ms: float = 1000.0
    """The smoothed time between requests."""


class Debounce:
    """The request timing of one session's documents, and the wait it gives each request."""

    def __init__(self, ceiling_ms: Callable[[], float]) -> None:
        self._ceiling_ms = ceiling_ms
        """The configured longest wait (``completion.debounce_ms``; 0 turns it off)."""
        self.timing: dict[str, DocTiming] = {}
        """Each document's request timing."""
        self.recent_latency_ms = 1000.0
        """The smoothed time answers took."""

    def seconds(self, uri: str, shared_engine: bool = False) -> float:
        """How long to wait before starting the engine for a request on ``uri``."""
        ceiling = self._ceiling_ms()
        if ceiling > 0 and shared_engine:
            return ceiling / 1000
        timing = self.timing.get(uri)
        if ceiling <= 0 or timing is None or timing.interval_ms >= ceiling:
            return 0.0
        wait = ceiling / 2 if self.recent_latency_ms < FAST_ANSWER_MS else ceiling
        return wait / 1000

    def note_request(self, uri: str) -> None:
        """A request came for ``uri`` now."""
        now = time.monotonic()
        timing = self.timing.setdefault(uri, DocTiming(last_request=now - 1.0))
        interval = (now - timing.last_request) * 1000
        timing.interval_ms = 0.6 * timing.interval_ms + 0.4 * min(interval, LONGEST_INTERVAL_MS)
        timing.last_request = now

    def note_latency(self, latency_ms: float) -> None:
        """An answer the engine gave took ``latency_ms``."""
        self.recent_latency_ms = 0.7 * self.recent_latency_ms + 0.3 * latency_ms

    def forget(self, uri: str) -> None:
        """The document closed."""
        self.timing.pop(uri, None)
