"""What the editor starts: a thin forwarder between its stdio and the user's shared server.

It loads no model and imports neither pygls nor llama.cpp. At the editor's first message it
reaches the user's shared server (``spawn``), starting it if none answers, and relays LSP both
ways unchanged (its side toward the server is ``server_side``'s, with what happens when the
server goes away). Along the way it keeps what a new server would need (``editor_session``):
the ``initialize`` request, the settings layers, the open documents and the requests still
waiting for an answer.

The process ends like the in-process server: on ``exit`` (code 0 after ``shutdown``, 1
without), when the editor's stream closes, on SIGTERM or SIGINT, or when the editor's process
is gone.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from ..config import Config
from ..server.connection import MAX_UNREAD_BYTES, PipeWriter, read_in_thread
from ..server.framing import PARSE_ERROR, Damaged, FrameReader, Message, valid_id
from ..server.lifecycle import on_signals, run_loop, watch_parent
from .editor_session import EditorSession
from .handshake import frame
from .runtime import build_id
from .server_side import ServerSide
from .spawn import Link

log = logging.getLogger(__name__)

DRAIN_S = 1.0


class Forwarder(ServerSide):
    """One editor's stdio, relayed to a shared server."""

    def __init__(self, base: Config, problem: str | None) -> None:
        self.cwd = os.getcwd()
        """The folder the editor started us in (relative paths in settings start there)."""
        self.base = base
        """The config file's settings (the editor's layers go over them)."""
        self.problem = problem
        """What was wrong reading the config file (the server tells the user)."""
        self.build = build_id()
        """This installation's build (a forwarder talks only to a server of its own)."""
        self.session = EditorSession()
        """What a new server would need of the editor's session."""
        self.asked: set[Any] = set()
        """Ids of the requests the current server sent the editor (answers to an earlier
        server's are dropped)."""
        self.link: Link | None = None
        """The connection to the shared server (None before the first message, or when it
        went away)."""
        self._held: list[dict] | None = None
        """Messages from the editor held while a server is being reached (None: not)."""
        self._batch: list[bytes] | None = None
        """Frames for the server gathered to go in one write (None: each goes at once)."""
        self._retry_at = 0.0
        """After a failed reach, no new one is tried before this loop time (requests are
        answered here meanwhile)."""
        self._failures = 0
        """Failed reaches in a row (the wait before the next grows with them)."""
        self._out: PipeWriter | None = None
        """The editor's stdout (set when ``run`` starts)."""
        self.done: asyncio.Future[int] | None = None
        """Resolved with the exit code when the forwarder ends."""

    # -- the editor's side ----------------------------------------------------------------------

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self.done = loop.create_future()
        self._out = PipeWriter(1)
        frames = FrameReader()
        read_in_thread(0, loop, lambda data: self._from_editor_bytes(frames, data))
        on_signals(lambda: self.finish(None))
        watch = asyncio.ensure_future(watch_parent(self.session.editor_pid,
                                                   lambda: self.finish(None)))
        try:
            return await self.done
        finally:
            watch.cancel()
            if self.link is not None:
                self.link.writer.close()
            await asyncio.to_thread(self._out.drain, DRAIN_S)

    def finish(self, code: int | None) -> None:
        """End; ``None``: 0 if ``shutdown`` was answered, else 1."""
        if self.done is not None and not self.done.done():
            self.done.set_result((0 if self.session.shut_down else 1) if code is None else code)

    def _to_editor(self, value: dict) -> None:
        assert self._out is not None
        try:
            self._out.write(frame(value))
        except OSError:
            self.finish(None)
            return
        if self._out.unread() > MAX_UNREAD_BYTES:
            log.warning("the editor has not read %d bytes; stopping", self._out.unread())
            self.finish(None)

    def _from_editor_bytes(self, frames: FrameReader, data: bytes) -> None:
        if not data:
            log.info("the editor closed the stream")
            self.finish(None)
            return
        with self._one_write():
            self._from_editor_frames(frames.feed(data))

    def _from_editor_frames(self, items: list) -> None:
        for item in items:
            if isinstance(item, Damaged):
                log.warning("unreadable message from the editor: %s", item.reason)
                if item.request_id is not None:
                    self._answer(item.request_id, error=(PARSE_ERROR,
                                                          f"Parse error: {item.reason}"))
            elif isinstance(item, Message):
                value = item.value
                if not item.utf8 and isinstance(value, dict) and valid_id(value.get("id")) \
                        and isinstance(value.get("method"), str):
                    self._answer(value["id"], error=(
                        PARSE_ERROR, f"Parse error: {value['method'][:100]}: not UTF-8"))
                    continue
                self._from_editor(value)

    def _from_editor(self, message: Any) -> None:
        """Follow one message (a malformed one is only relayed: the server answers it)."""
        if not isinstance(message, dict):
            self._relay(message)
            return
        method, rid = message.get("method"), message.get("id")
        request = "id" in message and valid_id(rid)
        if method is None and request:  # the editor's answer to the server's request
            if rid in self.asked:
                self.asked.discard(rid)
                self._relay(message)
            return
        if not isinstance(method, str):
            self._relay(message)
            return
        self.session.follow(message, method, request)
        self._relay(message)
        if method == "exit" and "id" not in message:
            asyncio.ensure_future(self._exit())

    async def _exit(self) -> None:
        """The editor said ``exit``: it reaches the server, then this process ends."""
        if self.link is not None:
            try:
                await asyncio.wait_for(self.link.writer.drain(), DRAIN_S)
            except (OSError, TimeoutError):
                pass
        self.finish(None)

    def _answer(self, rid: Any, result: Any = None,
                error: tuple[int, str] | None = None) -> None:
        """Answer the editor's request ``rid`` ourselves."""
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        if error is not None:
            answer["error"] = {"code": error[0], "message": error[1]}
        else:
            answer["result"] = result
        self.session.answered(answer)
        self._to_editor(answer)


def run_forwarder(base: Config, problem: str | None) -> int:
    """Forward this process's stdio to the shared server; returns the exit code."""
    forwarder = Forwarder(base, problem)
    return run_loop(forwarder.run)
