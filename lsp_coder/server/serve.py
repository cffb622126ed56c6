"""Serve editor sessions in this process: one over stdio, several at once over TCP.

Over stdio the process ends with its session: on ``exit`` (code 0 after ``shutdown``, 1
without), when the client's stream closes, on SIGTERM or SIGINT, or when the editor's process is
gone. Over TCP each connection is a session of its own on the one model; a client that
disconnects ends only its session, and the process ends when the last session ends with
``shutdown`` or ``exit``, or on SIGTERM or SIGINT. The caller then ends the process
(``lifecycle.exit_now``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any, Callable

from .connection import READ_SIZE, Connection, PipeWriter, read_in_thread
from .host import EngineHost
from .lifecycle import on_signals, run_loop, watch_parent

log = logging.getLogger(__name__)

DRAIN_S = 1.0
"""At the end, how long answers still queued for stdout may take to be written."""


def serve_stdio(host: EngineHost, new_session: Callable[[], Any]) -> int:
    """Serve one session over stdin/stdout; returns the exit code."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        session = new_session()
        connection = Connection(session)
        out = PipeWriter(sys.stdout.buffer.fileno())
        connection.attach(out.write, out.unread)
        read_in_thread(sys.stdin.buffer.fileno(), loop, connection.feed)
        on_signals(lambda: connection.finish(None))
        watch = asyncio.ensure_future(watch_parent(
            lambda: getattr(session, "process_id", None), lambda: connection.finish(None)))
        try:
            return await connection.done
        finally:
            watch.cancel()
            session.end()
            host.shutdown()
            await asyncio.to_thread(out.drain, DRAIN_S)

    return run_loop(main)


def serve_tcp(host: EngineHost, new_session: Callable[[], Any], address: str,
              port: int) -> int:
    """Serve editor sessions over TCP on ``address:port``, several at once; returns the exit
    code.

    Raises:
        OSError: the address cannot be bound.
    """

    async def main() -> int:
        ended: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        live: set[Any] = set()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
            peer = writer.get_extra_info("peername")
            log.info("a client connected from %s", peer)
            session = new_session()
            live.add(session)
            connection = Connection(session)
            connection.attach(writer.write, writer.transport.get_write_buffer_size)
            try:
                await pump(reader, connection)
                code = await connection.done
            finally:
                live.discard(session)
                session.end()
                close(writer, connection)
            log.info("the client from %s left", peer)
            protocol = session.protocol
            if protocol.shut_down or protocol.exit_code is not None:
                if not live and not ended.done():
                    ended.set_result(code)
            elif not live:
                log.warning("the client disconnected; the model stays loaded for the next one")

        def stop() -> None:
            if not ended.done():
                ended.set_result(0 if all(s.protocol.shut_down for s in live) else 1)

        on_signals(stop)
        listener = await asyncio.start_server(on_connect, address, port)
        bound = listener.sockets[0].getsockname()
        log.warning("listening on %s port %d", bound[0], bound[1])
        async with listener:
            code = await ended
        host.shutdown()
        return code

    return run_loop(main)


def close(writer: asyncio.StreamWriter, connection: Connection) -> None:
    """Close a client's stream; one that stopped reading loses what it was not sent."""
    if connection.dropped:
        writer.transport.abort()
    else:
        writer.close()


async def pump(reader: asyncio.StreamReader, connection: Connection) -> None:
    """Feed what the client sends into ``connection`` until it ends or the stream closes."""
    while not connection.done.done():
        read = asyncio.ensure_future(reader.read(READ_SIZE))
        await asyncio.wait((read, connection.done), return_when=asyncio.FIRST_COMPLETED)
        if not read.done():
            read.cancel()
            return
        try:
            data = read.result()
        except (OSError, asyncio.IncompleteReadError):
            data = b""
        connection.feed(data)
        if not data:
            return
