"""Reach the user's shared server, starting it (detached) when none answers.

Two forwarders starting at the same moment make one server: the one that starts it holds the
endpoint's lock file while it does, and the other, once it gets the lock, finds the server
answering. The server is started in a session of its own with no terminal and its output in
its log file, so it outlives the editor that started it, and it runs in ``/`` (file paths in
settings are made absolute first, from the folder the editor started lsp-coder in).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from .handshake import frame, read_first
from .runtime import Endpoint, peer_uid, use_tcp

START_TIMEOUT_S = 60.0
"""How long a new server may take to answer (it imports the engine before it listens)."""
POLL_S = 0.05


class Refused(ConnectionError):
    """The server answered but will not serve this forwarder (another build)."""


@dataclass(slots=True)
class Link:
    """An open connection to a shared server that welcomed us."""

    reader: asyncio.StreamReader
    """What the server sends."""
    writer: asyncio.StreamWriter
    """Where we send."""
    welcome: dict
    """Its welcome: ``build``, ``pid``."""


async def connect(endpoint: Endpoint, hello: dict[str, Any]) -> Link:
    """Open a connection and say ``hello`` (raises ConnectionError, Refused)."""
    hello = dict(hello, lspCoder="hello")
    if use_tcp():
        info = endpoint.read_info()
        if not info.get("port"):
            raise ConnectionError(f"{endpoint.info}: no shared server")
        reader, writer = await asyncio.open_connection("127.0.0.1", int(info["port"]))
        hello["token"] = info.get("token")
    else:
        if not endpoint.socket.exists():
            raise ConnectionError(f"{endpoint.socket}: no shared server")
        reader, writer = await asyncio.open_unix_connection(str(endpoint.socket))
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid is not None and hasattr(os, "getuid") and uid != os.getuid():
            writer.close()
            raise ConnectionError(f"{endpoint.socket} is served by another user ({uid})")
    writer.write(frame(hello))
    answer = await read_first(reader)
    if answer is None or answer.get("lspCoder") not in ("welcome", "refused", hello.get(
            "query")):
        writer.close()
        raise ConnectionError(f"{endpoint.name}: no answer")
    if answer.get("lspCoder") == "refused":
        writer.close()
        raise Refused(str(answer.get("reason", "refused")))
    return Link(reader, writer, answer)


async def connect_or_start(endpoint: Endpoint, hello: dict[str, Any],
                           idle_exit_s: float) -> Link:
    """A welcomed connection to ``endpoint``'s server, started if it does not answer (raises
    ConnectionError when it cannot be started or reached within ``START_TIMEOUT_S``)."""
    if (link := await _answering(endpoint, hello)) is not None:
        return link
    async with _locked(endpoint):
        if (link := await _answering(endpoint, hello)) is not None:
            return link  # another forwarder started it meanwhile
        await start(endpoint, idle_exit_s)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT_S
        while (link := await _answering(endpoint, hello)) is None:
            if loop.time() > deadline:
                raise ConnectionError(f"the shared server did not start (see {endpoint.log})")
            await asyncio.sleep(POLL_S)
        return link


async def _answering(endpoint: Endpoint, hello: dict[str, Any]) -> Link | None:
    """A connection if the server answers; None if none listens (Refused goes up)."""
    try:
        return await connect(endpoint, hello)
    except Refused:
        raise
    except OSError:
        return None


async def start(endpoint: Endpoint, idle_exit_s: float) -> None:
    """Start the shared server, detached; returns once it is on its way."""
    command = [sys.executable, "-m", "lsp_coder", "daemon", "run",
               "--idle-exit", str(idle_exit_s)]
    if hasattr(os, "fork"):
        command.append("--detach")
    with open(endpoint.log, "ab") as log:
        os.chmod(endpoint.log, 0o600)
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=log, cwd="/",
                                   start_new_session=True, close_fds=True)
    if "--detach" in command:  # it forks and its first process exits: nothing left to reap
        await asyncio.to_thread(process.wait)


@asynccontextmanager
async def _locked(endpoint: Endpoint):
    """Hold the endpoint's lock file (waits up to ``START_TIMEOUT_S`` for another holder)."""
    fd = os.open(endpoint.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT_S
        while not _try_lock(fd):
            if loop.time() > deadline:
                raise ConnectionError(f"{endpoint.lock}: held by another process for too long")
            await asyncio.sleep(POLL_S)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): msvcrt's byte-range lock
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
