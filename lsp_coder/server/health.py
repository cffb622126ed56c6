"""Commands that let tests (and curious users) check the server's own state.

``lspCoder.document`` returns the server's copy of an open document in UTF-16 code units (so a
client can compare it with its own after the same edits); ``lspCoder.health`` returns the
longest time the event loop was blocked since the last call (wall and CPU time), including a
block that ended just before it, and how many handlers and requests the protocol still tracks.
The loop is watched only while someone measures: from a call until ``WATCH_FOR_S`` after the
last one (an idle server's loop sleeps). Nothing here is logged.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

DOCUMENT_COMMAND = "lspCoder.document"
HEALTH_COMMAND = "lspCoder.health"
TICK_S = 0.005
WATCH_FOR_S = 60.0
"""The watch stops this long after the last ``lspCoder.health`` call."""


class LoopWatch:
    """Measures how late a short timer fires: the longest the event loop was blocked.

    Two measures: wall time (what the editor feels; includes waiting for the CPU on a busy
    machine and for the GIL), and the loop thread's own CPU time over the same interval (the
    work done in the loop's callbacks, whatever the machine's load).
    """

    def __init__(self) -> None:
        self.max_block_ms = 0.0
        self.max_busy_ms = 0.0
        self._asked = 0.0  # when a measure was last asked for (time.monotonic)
        self._task: asyncio.Task | None = None  # the ticking timer, while watched

    def watch(self) -> None:
        """Watch the loop (event loop thread) until ``WATCH_FOR_S`` from now."""
        self._asked = time.monotonic()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        while time.monotonic() - self._asked < WATCH_FOR_S:
            start, cpu = time.perf_counter(), time.thread_time()
            await asyncio.sleep(TICK_S)
            late_ms = (time.perf_counter() - start - TICK_S) * 1000
            self.max_block_ms = max(self.max_block_ms, late_ms)
            self.max_busy_ms = max(self.max_busy_ms, (time.thread_time() - cpu) * 1000)

    def take(self) -> dict:
        """The longest block since the last call (then reset)."""
        out = {"loop_block_max_ms": round(self.max_block_ms, 2),
               "loop_busy_max_ms": round(self.max_busy_ms, 2)}
        self.max_block_ms = self.max_busy_ms = 0.0
        return out


def register_health_commands(server: Any) -> None:
    """Add the two commands to ``server`` and give it a ``loop_watch`` (the transport stops
    it at the end)."""
    server.loop_watch = LoopWatch()

    @server.command(DOCUMENT_COMMAND)
    def document(ls: Any, uri: str) -> dict | None:
        doc = ls.protocol.documents.get(uri)
        if doc is None:
            return None
        return {"units": doc.units, "version": doc.version, "lines": doc.line_count}

    @server.command(HEALTH_COMMAND)
    async def health(ls: Any, *args: Any) -> dict:
        ls.loop_watch.watch()
        # A block that ended in this same loop turn (say, parsing a big message that arrived
        # in the same read as this request) is recorded once the watch's timer has fired.
        await asyncio.sleep(2 * TICK_S)
        # Requests and handlers still running, this one included (a leak shows here).
        return {**ls.loop_watch.take(), "handlers_in_flight": ls.protocol.handlers_in_flight()}
