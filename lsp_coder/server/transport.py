"""Serve a client over stdio or TCP: our own reader, and an end the way LSP says.

The session ends on ``exit`` (code 0 after ``shutdown``, 1 without), when the client's stream
closes (over stdio), on SIGTERM or SIGINT, or when the editor's process is gone; without
``shutdown`` first the code is 1. The caller then ends the process (``lifecycle.exit_now``).
Over TCP a client that disconnects without ``exit`` (or ``shutdown``) leaves the server
waiting, model loaded, for the next one; a second client while one is connected is refused.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from typing import Any, Callable

from .framing import FrameReader
from .lifecycle import watch_parent

log = logging.getLogger(__name__)

READ_SIZE = 65536
STALL_S = 0.5  # a client quiet this long in the middle of a frame is waiting for us


class _Writer:
    """pygls's writer interface; a closed stream ends the session instead of raising."""

    def __init__(self, write: Callable[[bytes], Any], on_closed: Callable[[], None]) -> None:
        self._write = write
        self._on_closed = on_closed

    def write(self, data: bytes) -> None:
        try:
            self._write(data)
        except (OSError, ValueError, RuntimeError):  # broken pipe, closed file or transport
            self._on_closed()

    def close(self) -> None:
        pass


class Session:
    """Feeds the client's bytes through the frame reader into the protocol."""

    def __init__(self, server: Any, stop_work: Callable[[], None]) -> None:
        self.server = server
        self.protocol = server.protocol
        self.reader = FrameReader()
        self.stop_work = stop_work
        self.done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.protocol.on_exit = self.finish
        self._stall: asyncio.TimerHandle | None = None

    def writer(self, write: Callable[[bytes], Any]) -> _Writer:
        return _Writer(write, lambda: self.finish(None))

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

    def client_left(self) -> None:
        """A TCP client disconnected: after its queued messages, end the session if it shut
        the server down, else make ready for the next client."""
        asyncio.get_running_loop().call_soon(self._next_client)

    def _next_client(self) -> None:
        if self.done.done():
            return
        if self.protocol.shut_down:
            self.finish(None)
            return
        if self._stall is not None:
            self._stall.cancel()
        self.reader = FrameReader()
        self.server.next_client()
        log.warning("the client disconnected; waiting for the next one")

    def finish(self, code: int | None) -> None:
        """End the session; ``None``: 0 if ``shutdown`` was answered, else 1."""
        if self.done.done():
            return
        if code is None:
            code = 0 if self.protocol.shut_down else 1
        try:
            self.stop_work()
        except Exception:
            log.exception("stopping the engine work failed")
        self.done.set_result(code)

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.finish, None)
        tasks = [asyncio.ensure_future(watch_parent(
            lambda: getattr(self.server, "process_id", None), lambda: self.finish(None)))]
        try:
            return await self.done
        finally:
            for task in tasks:
                task.cancel()
            if (loop_watch := getattr(self.server, "loop_watch", None)) is not None:
                loop_watch.stop()


def _run(main: Callable[[], Any]) -> int:
    """Run ``main()`` on a fresh loop; left-over tasks and threads are not waited for."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop.run_until_complete(main())


def serve_stdio(server: Any, stop_work: Callable[[], None]) -> int:
    """Serve over stdin/stdout; returns the exit code."""

    async def main() -> int:
        session = Session(server, stop_work)
        loop = asyncio.get_running_loop()
        out = sys.stdout.buffer

        def write(data: bytes) -> None:
            out.write(data)
            out.flush()

        server.protocol.set_writer(session.writer(write))
        fd = sys.stdin.buffer.fileno()

        def read_stdin() -> None:
            while True:
                try:
                    data = os.read(fd, READ_SIZE)
                except OSError:
                    data = b""
                try:
                    loop.call_soon_threadsafe(session.feed, data)
                except RuntimeError:  # the loop is gone
                    return
                if not data:
                    return

        threading.Thread(target=read_stdin, name="lsp-coder-stdin", daemon=True).start()
        return await session.run()

    return _run(main)


def serve_tcp(server: Any, stop_work: Callable[[], None], host: str, port: int) -> int:
    """Serve clients over TCP on ``host:port``, one after another; returns the exit code.

    Raises:
        OSError: the address cannot be bound.
    """

    async def main() -> int:
        session = Session(server, stop_work)
        connected = False

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
            nonlocal connected
            peer = writer.get_extra_info("peername")
            if connected:  # one editor at a time
                log.warning("refused a client from %s: this server is serving another editor"
                            " (one at a time; start another server for a second one)", peer)
                writer.close()
                return
            connected = True
            log.info("a client connected from %s", peer)
            server.protocol.set_writer(session.writer(writer.write))
            try:
                while not session.done.done():
                    try:
                        data = await reader.read(READ_SIZE)
                    except (OSError, asyncio.IncompleteReadError):
                        data = b""
                    if not data:
                        session.client_left()
                        break
                    session.feed(data)
            finally:
                writer.close()
                connected = False

        listener = await asyncio.start_server(on_connect, host, port)
        bound = listener.sockets[0].getsockname()
        log.warning("listening on %s port %d", bound[0], bound[1])
        async with listener:
            return await session.run()

    return _run(main)
