"""The user's shared server: one model for every editor, one LSP session per connection.

Started detached by the first forwarder that needs it (``spawn``), it listens on its endpoint
(``runtime.Endpoint``), checks each peer is the same user (and over TCP that it sends the
token), answers the forwarder's ``hello`` and then serves that connection as an editor session
of its own (``server.host.EngineHost``): editors whose settings choose the same model share it,
another model is loaded beside it, all on one inference worker. It exits ``idle_exit_s`` after
its last session ends, on ``lsp-coder daemon stop``, or on SIGTERM.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import time
from typing import Any

from ..config import Config, ConfigError, apply
from ..server.app import build_server
from ..server.connection import Connection
from ..server.host import EngineHost
from ..server.lifecycle import on_signals, run_loop
from ..server.serve import close, pump
from .handshake import frame, read_first
from .runtime import Endpoint, build_id, idle_exit_s, peer_uid, use_tcp

log = logging.getLogger(__name__)

FIRST_EDITOR_S = 60.0
"""A server just started waits at least this long for its first editor (the forwarder that
started it connects at once)."""


class SharedServer:
    """Accepts forwarders and runs their sessions until it is told to stop or stays idle."""

    def __init__(self, endpoint: Endpoint, idle_exit_s: float) -> None:
        self.endpoint = endpoint
        self.build = build_id()
        self.idle_exit_s = idle_exit_s
        """Seconds it stays up after its last session (the latest session's setting)."""
        self.host = EngineHost(shared=True)
        self.started = time.time()
        self.token: str | None = None
        """The secret a TCP client must send (None over a Unix socket)."""
        self._stopped: asyncio.Future | None = None
        self._idle_timer: asyncio.TimerHandle | None = None

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        on_signals(self.stop)
        pid = os.getpid()
        if use_tcp():
            listener = await asyncio.start_server(self._accept, "127.0.0.1", 0)
            port = listener.sockets[0].getsockname()[1]
            self.token = self.endpoint.write_info(pid, port)
        else:
            self.endpoint.check_socket_path()
            try:
                self.endpoint.socket.unlink()
            except FileNotFoundError:
                pass
            old_mask = os.umask(0o177)  # the socket is the user's alone from its first moment
            try:
                listener = await asyncio.start_unix_server(self._accept,
                                                           path=str(self.endpoint.socket))
            finally:
                os.umask(old_mask)
            self.endpoint.write_info(pid)
        log.warning("lsp-coder %s shared server (pid %d) listening", self.build, pid)
        self._arm_idle_exit(max(self.idle_exit_s, FIRST_EDITOR_S))
        async with listener:
            await self._stopped
        self.endpoint.remove_files(pid)
        self.host.shutdown()
        return 0

    def stop(self) -> None:
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    def _arm_idle_exit(self, wait_s: float | None = None) -> None:
        """Exit ``wait_s`` (default ``idle_exit_s``) from now unless a session comes."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        if not self.host.sessions:
            self._idle_timer = asyncio.get_running_loop().call_later(
                self.idle_exit_s if wait_s is None else wait_s, self._idle_exit)

    def _idle_exit(self) -> None:
        if not self.host.sessions:
            log.warning("no editor for %g s; exiting", self.idle_exit_s)
            self.stop()

    # -- one connection -------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve_peer(reader, writer)
        except Exception:  # one connection's failure must not end the server
            log.exception("a connection failed")
        finally:
            writer.close()

    async def _serve_peer(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if self.token is None and sock is not None and hasattr(os, "getuid"):
            uid = peer_uid(sock)
            if uid is not None and uid != os.getuid():
                log.warning("refused a connection from user %d", uid)
                return
        hello = await read_first(reader)
        if hello is None or hello.get("lspCoder") != "hello":
            return
        if self.token is not None and not hmac.compare_digest(
                str(hello.get("token", "")), self.token):
            log.warning("refused a connection without the token")
            return
        query = hello.get("query")
        if query is not None:
            writer.write(frame(self.answer(query)))
            await writer.drain()
            if query == "stop":
                self.stop()
            return
        refusal = self._refusal(hello)
        if refusal:
            writer.write(frame({"lspCoder": "refused", "reason": refusal}))
            await writer.drain()
            return
        base, problem = self._base_config(hello)
        self.idle_exit_s = idle_exit_s(base.server.idle_exit_s)
        writer.write(frame({"lspCoder": "welcome", "build": self.build, "pid": os.getpid()}))
        await self._run_session(reader, writer, base, problem, str(hello.get("cwd") or "/"))

    def _refusal(self, hello: dict) -> str:
        if hello.get("build") != self.build:
            return f"this shared server runs lsp-coder {self.build}, not {hello.get('build')}"
        return ""

    @staticmethod
    def _base_config(hello: dict) -> tuple[Config, str | None]:
        """The editor's settings from its config file, and what was wrong reading it."""
        problem = hello.get("problem") or None
        try:
            return apply(Config(), hello.get("config") or None, "the editor's config"), problem
        except ConfigError as exc:
            return exc.usable or Config(), problem or f"lsp-coder: {exc}"

    async def _run_session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                           base: Config, problem: str | None, cwd: str) -> None:
        session = build_server(self.host, base, startup_problem=problem, cwd=cwd)
        self._arm_idle_exit()
        connection = Connection(session)
        connection.attach(writer.write, writer.transport.get_write_buffer_size)
        try:
            await pump(reader, connection)
            await connection.done
        finally:
            session.end()
            close(writer, connection)
            self._arm_idle_exit()

    # -- questions ------------------------------------------------------------------------------

    def answer(self, query: str) -> dict[str, Any]:
        """What ``lsp-coder daemon status`` shows (also the answer to ``stop``)."""
        host = self.host
        models = []
        for slot in list(host.slots.values()):
            info = slot.lifecycle.describe() if slot.lifecycle.backend is not None else {}
            models.append({"model": info.get("model") or info.get("url") or "",
                           "draft": info.get("draft"), "backend": info.get("kind", ""),
                           "editors": host.editors(slot), "loading": slot.loading is not None,
                           "error": slot.lifecycle.error})
        return {"lspCoder": query, "pid": os.getpid(), "build": self.build,
                "editors": host.editors(), "sessions": len(host.sessions), "models": models,
                "uptime_s": round(time.time() - self.started, 1),
                "idle_exit_s": self.idle_exit_s, "rss_bytes": resident_bytes()}


def resident_bytes() -> int:
    """This process's resident memory in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def run_shared_server(idle_exit_s: float) -> int:
    """Serve as the user's shared server until it stops; returns the exit code."""
    return run_loop(SharedServer(Endpoint.of(), idle_exit_s).serve)
