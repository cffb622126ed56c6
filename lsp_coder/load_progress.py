"""One percentage for a whole model load: the model files prepared, then the weights read.

A load runs in stages (assemble and check each embedded model that needs it, then read each
model's weights), each weighed by its size in bytes. Each stage reports its own progress;
``LoadProgress`` turns them into a single percentage that only rises, and calls its listener
once per new whole percent above 0.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

StageProgress = Callable[[int, int], None]
"""Called with (units done, units total) while one stage runs."""

Listener = Callable[[int, str], None]
"""Called with (percentage 0..100, what the load is doing) each time the percentage rises."""


@dataclass(frozen=True, slots=True)
class Stage:
    """One step of a load."""

    key: str
    """Names the stage for the code that runs it: ``prepare:<file>`` or ``load:<file>``."""
    label: str
    """What the user sees while it runs, e.g. ``preparing qwen2.5-coder-1.5b.gguf``."""
    size: int
    """Its weight: the bytes it reads."""


def prepare_key(filename: str) -> str:
    """The key of the stage that assembles and checks an embedded model file."""
    return f"prepare:{filename}"


def load_key(filename: str) -> str:
    """The key of the stage that reads a model file's weights."""
    return f"load:{filename}"


class LoadProgress:
    """The stages of one load and where each stands; thread-safe (stages report from the
    worker thread)."""

    def __init__(self, stages: list[Stage], listener: Listener) -> None:
        self._stages = {s.key: s for s in stages}
        self._done = {s.key: 0.0 for s in stages}
        self._total = sum(max(s.size, 1) for s in stages)
        self._listener = listener
        self._percent = 0  # a load starts at 0 %: only a rise is news
        self._lock = threading.Lock()

    @property
    def percent(self) -> int:
        """The last percentage reported (0 before the first)."""
        return self._percent

    def stage(self, key: str) -> StageProgress | None:
        """The progress callback of stage ``key``; None for a stage the plan does not hold."""
        if key not in self._stages:
            return None
        weight = max(self._stages[key].size, 1)

        def update(done: int, total: int) -> None:
            fraction = min(max(done / total, 0.0), 1.0) if total > 0 else 1.0
            self._advance(key, weight * fraction)

        return update

    def finish(self) -> None:
        """Count every stage as done (those that did not run too: a cached file, no draft)."""
        with self._lock:
            self._done = {key: float(max(s.size, 1)) for key, s in self._stages.items()}
        self._emit("")

    def _advance(self, key: str, done: float) -> None:
        with self._lock:
            self._done[key] = max(self._done[key], done)
        self._emit(self._stages[key].label)

    def _emit(self, label: str) -> None:
        # NOTE: the listener runs under the lock, so reports reach it in rising order.
        with self._lock:
            if not self._stages:
                return
            percent = int(sum(self._done.values()) * 100 / self._total)
            if percent > self._percent:
                self._percent = percent
                self._listener(percent, label)
