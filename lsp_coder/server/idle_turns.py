"""Whose idle work runs on the one inference worker when several editors share it.

Each editor session plans its own idle work (``idle_runner.IdleRunner``); this decides when and
whose job runs: one idle job at a time, only while no request of any session waits, once the
user has paused, and the session the user was last active in first.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


class IdleTurns:
    """The sessions' idle runners, most recently active first (event loop side)."""

    def __init__(self, requests_waiting: Callable[[], bool]) -> None:
        self.runners: list[Any] = []
        """Every session's ``IdleRunner``, the one the user was last active in first."""
        self.last_activity = 0.0
        """When the user last typed or was answered, in any session (monotonic seconds)."""
        self._requests_waiting = requests_waiting
        """Whether a request of any session is pending or its work queued."""
        self._timer: asyncio.TimerHandle | None = None

    def join(self, runner: Any) -> None:
        self.runners.append(runner)

    def leave(self, runner: Any) -> None:
        if runner in self.runners:
            self.runners.remove(runner)

    def active(self, runner: Any) -> None:
        """The user is in ``runner``'s session now: its idle work comes first."""
        self.last_activity = time.monotonic()
        if self.runners and self.runners[0] is not runner and runner in self.runners:
            self.runners.remove(runner)
            self.runners.insert(0, runner)

    @property
    def running(self) -> Any | None:
        """The runner whose job is on the worker now, if any."""
        return next((r for r in self.runners if r.running), None)

    def stop_others(self, runner: Any, measure: bool = True) -> None:
        """Another session's running idle job stops within its ubatch: ``runner``'s user
        needs the worker."""
        for other in self.runners:
            if other is not runner and other.running:
                other.stop(measure=measure)

    def schedule(self) -> None:
        """Start the next idle job once the worker is free and the user has paused."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.running is not None or self._requests_waiting():
            return
        for runner in self.runners:
            wait = runner.ready_in(self.last_activity)
            if wait is None:
                continue
            if wait > 0:
                self._timer = asyncio.get_running_loop().call_later(wait, self.schedule)
            else:
                runner.start_next()
            return
