"""Calls that may touch the file system, run with a bound on how long the caller waits.

A file on a hung network mount hangs ``stat`` and ``read`` whatever flags they get; the
inference worker must not hang with it. Such work (the other files' section, whether a
document is excluded) runs on a helper thread; the worker waits for it at most ``limit_s``.
A call that overruns is left to finish alone (its results still fill the caches), and until it
does, calls answer their default at once instead of queueing behind it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class BoundedCalls:
    """Runs calls one at a time on a helper thread, waiting for each at most ``limit_s``.

    Args:
        limit_s: the longest the caller waits for one call.
        what: what the calls do, for the log line when one overruns.
    """

    def __init__(self, limit_s: float, what: str) -> None:
        self.limit_s = limit_s
        self.what = what
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._overrun: Future | None = None

    def run(self, call: Callable[[], T], default: T) -> T:
        """``call()``, or ``default`` when it takes longer than ``limit_s`` or when an earlier
        call that did is still running. An exception ``call`` raises is raised here."""
        overrun = self._overrun
        if overrun is not None:
            if not overrun.done():
                return default
            self._overrun = None
            log.info("%s answers again", self.what)
        future: Future = Future()
        self._calls.put((call, future))
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, daemon=True,
                                            name="lsp-coder-files")
            self._thread.start()
        try:
            return future.result(self.limit_s)
        except FutureTimeout:
            self._overrun = future
            log.warning("%s took over %g s (a file on a hung network mount?); going on"
                        " without it until it returns", self.what, self.limit_s)
            return default

    def _serve(self) -> None:
        while True:
            call, future = self._calls.get()
            try:
                future.set_result(call())
            except BaseException as exc:  # handed to the caller
                future.set_exception(exc)
