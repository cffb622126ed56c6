"""One client's byte stream and one editor session: our own reader, bounded writes, an end.

A connection ends on ``exit`` (code 0 after ``shutdown``, 1 without), when the client's stream
closes, or when the client stops reading: what the server has written and the client has not
read may grow to ``MAX_UNREAD_BYTES``, then the session is dropped with a log line (a stuck
client never blocks the event loop nor grows the server's memory without bound).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections import deque
from typing import Any, Callable

from .framing import FrameReader

log = logging.getLogger(__name__)

READ_SIZE = 65536
STALL_S = 0.5  # a client quiet this long in the middle of a frame is waiting for us
MAX_UNREAD_BYTES = 8 * 2**20
"""What the server may have written that its client has not read yet."""


class Connection:
    """Feeds the client's bytes through the frame reader into one session's protocol."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.protocol = server.protocol
        self.reader = FrameReader()
        self.done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        """The exit code once the connection ended (see ``finish``)."""
        self.protocol.on_exit = self.finish
        self.dropped = False
        """The client stopped reading: what it was sent is discarded, not flushed."""
        self._stall: asyncio.TimerHandle | None = None

    def attach(self, write: Callable[[bytes], Any], unread: Callable[[], int]) -> None:
        """Send the session's messages with ``write``; ``unread`` tells how many written bytes
        the client has not read yet."""
        self.protocol.set_writer(_Writer(write, unread, self))

    def feed(self, data: bytes) -> None:
        """Bytes from the client; empty means the stream closed."""
        loop = asyncio.get_running_loop()
        if not data:
            log.info("the client closed the stream")
            loop.call_soon(self.finish, None)  # after the messages still queued
            return
        # Handled in the next loop turn: parsing a big message and handling it are two
        # shorter blocks instead of one long one (callbacks run in order, so messages do too).
        loop.call_soon(self._deliver, self._read(self.reader.feed, data))
        if self._stall is not None:
            self._stall.cancel()
        self._stall = loop.call_later(
            STALL_S, lambda: self._deliver(self._read(self.reader.stalled)))

    def _read(self, step: Callable, *args: Any) -> list:
        try:
            return step(*args)
        except Exception:  # a bug in the reader must not make the server deaf
            log.exception("the frame reader failed; starting afresh")
            self.reader = FrameReader()
            return []

    def _deliver(self, items: list) -> None:
        for item in items:
            if self.done.done():
                return
            try:
                self.protocol.receive(item)
            except Exception:  # a bug here must not stop the reader
                log.exception("failed to handle a message")

    def finish(self, code: int | None) -> None:
        """End the connection; ``None``: 0 if ``shutdown`` was answered, else 1."""
        if self.done.done():
            return
        if self._stall is not None:
            self._stall.cancel()
        if code is None:
            code = 0 if self.protocol.shut_down else 1
        self.done.set_result(code)


class _Writer:
    """pygls's writer interface: a closed stream or a client that stopped reading ends the
    connection instead of raising or blocking."""

    def __init__(self, write: Callable[[bytes], Any], unread: Callable[[], int],
                 connection: Connection) -> None:
        self._write = write
        self._unread = unread
        self._connection = connection

    def write(self, data: bytes) -> None:
        if self._connection.done.done():
            return
        try:
            self._write(data)
        except (OSError, ValueError, RuntimeError):  # broken pipe, closed file or transport
            self._connection.finish(None)
            return
        if self._unread() > MAX_UNREAD_BYTES:
            log.warning("the client has not read %d bytes of answers; dropping its session",
                        self._unread())
            self._connection.dropped = True
            self._connection.finish(None)

    def close(self) -> None:
        pass


def read_in_thread(fd: int, loop: asyncio.AbstractEventLoop,
                   feed: Callable[[bytes], None]) -> None:
    """Read ``fd`` (the editor's stdin) in a thread of its own, handing each chunk to ``feed``
    on ``loop``; an empty chunk says the stream closed."""

    def read() -> None:
        while True:
            try:
                data = os.read(fd, READ_SIZE)
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(feed, data)
            except RuntimeError:  # the loop is gone
                return
            if not data:
                return

    threading.Thread(target=read, name="lsp-coder-stdin", daemon=True).start()


class PipeWriter:
    """Writes to a file descriptor from a thread of its own, so a client that stops reading
    blocks that thread, never the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._chunks: deque[bytes] = deque()
        self._unread = 0
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self.closed = False
        """The stream broke (the client is gone)."""
        threading.Thread(target=self._run, name="lsp-coder-stdout", daemon=True).start()

    def write(self, data: bytes) -> None:
        if self.closed:
            raise OSError("the output stream is closed")
        with self._ready:
            self._chunks.append(data)
            self._unread += len(data)
            self._ready.notify_all()

    def unread(self) -> int:
        """Bytes queued that the stream has not taken yet."""
        with self._lock:
            return self._unread

    def drain(self, timeout_s: float) -> None:
        """Wait until everything queued is written (at most ``timeout_s``: a client that does
        not read gets no more time)."""
        with self._ready:
            self._ready.wait_for(lambda: self._unread == 0 or self.closed, timeout_s)

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._chunks:
                    self._ready.wait()
                data = self._chunks.popleft()
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view):]
            except OSError:
                self.closed = True
                return
            finally:
                with self._ready:
                    self._unread -= len(data)
                    self._ready.notify_all()
