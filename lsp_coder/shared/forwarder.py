"""What the editor starts: a thin forwarder between its stdio and the user's shared server.

It loads no model and imports neither pygls nor llama.cpp. At the editor's first message it
reaches the user's shared server (``spawn``), starting it if none answers, and relays LSP both
ways unchanged. Along the way it keeps what a new server would need (``editor_session``):
the ``initialize`` request, the settings layers, the open documents and the requests still
waiting for an answer.

When the server goes away (it crashed, or was stopped), every request still waiting gets an
answer at once (``null`` where LSP allows it, else an error), a new server is reached or
started, told ``initialize`` (with the settings as they are now) and ``initialized`` again, and
every open document is opened in it at the editor's version: the editor goes on without a
restart. The process ends like the in-process server: on ``exit`` (code 0 after ``shutdown``, 1
without), when the editor's stream closes, on SIGTERM or SIGINT, or when the editor's process
is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any, Iterator

from ..config import Config
from ..config.converter import to_dict
from ..server.connection import MAX_UNREAD_BYTES, READ_SIZE, PipeWriter, read_in_thread
from ..server.framing import Damaged, FrameReader, Message
from ..server.lifecycle import on_signals, run_loop, watch_parent
from .editor_session import EditorSession, is_own_answer
from .handshake import frame
from .runtime import Endpoint, build_id, idle_exit_s
from .spawn import Link, Refused, connect_or_start

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
REQUEST_FAILED = -32803
NULL_ANSWERS = frozenset({
    "textDocument/inlineCompletion", "textDocument/completion",
    "textDocument/documentHighlight", "shutdown"})
"""Requests whose answer may be ``null``: a server gone mid-request answers them so."""
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits before trying again to reach a server after failing to."""
DRAIN_S = 1.0


class Forwarder:
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
        self._failures = 0
        self._out: PipeWriter | None = None
        self.done: asyncio.Future[int] | None = None

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
                if not item.utf8 and isinstance(value, dict) and _valid_id(value.get("id")) \
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
        request = "id" in message and _valid_id(rid)
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

    # -- the server's side ----------------------------------------------------------------------

    def _relay(self, message: Any) -> None:
        """Send ``message`` to the shared server, reaching it first if needed; while that is
        under way messages wait, in order."""
        if self._held is not None:
            self._held.append(message)
        elif self.link is not None:
            self._send(message)
        elif asyncio.get_running_loop().time() < self._retry_at:
            self._unserved(message)
        else:
            self._held = [message]
            asyncio.ensure_future(self._reach())

    def _send(self, message: Any) -> None:
        if self._batch is not None:
            self._batch.append(frame(message))
        else:
            self._write(frame(message))

    def _write(self, data: bytes) -> None:
        assert self.link is not None
        try:
            self.link.writer.write(data)
        except (OSError, RuntimeError):
            self._drop_link()

    @contextlib.contextmanager
    def _one_write(self) -> Iterator[None]:
        """Messages sent to the server inside go in one write: what the editor sent together
        (a request and its ``$/cancelRequest``) reaches the server together."""
        self._batch = []
        try:
            yield
        finally:
            batch, self._batch = self._batch, None
            if batch and self.link is not None:
                self._write(b"".join(batch))

    def _unserved(self, message: Any) -> None:
        """No server can be reached now: a request is answered here (documents are followed
        all the same, and opened in the next server)."""
        if isinstance(message, dict) and "id" in message and "method" in message:
            method = message["method"]
            if method in NULL_ANSWERS:
                self._answer(message["id"])
            else:
                self._answer(message["id"], error=(
                    REQUEST_FAILED, "lsp-coder: the shared server cannot be reached now"))

    async def _reach(self) -> None:
        """Reach (or start) the shared server, tell it what a new session needs, then send
        the held messages."""
        hello = {"build": self.build, "config": to_dict(self.base), "cwd": self.cwd,
                 "problem": self.problem}
        try:
            link = await connect_or_start(Endpoint.of(self.build), hello,
                                          idle_exit_s(self.base.server.idle_exit_s))
        except (OSError, Refused) as exc:
            self._failed(exc)
            return
        self.link, self._failures = link, 0
        held, self._held = self._held or [], None
        initialize = self.session.initialize
        replaying = initialize is not None and not any(m is initialize for m in held)
        asyncio.ensure_future(self._from_server(link))
        with self._one_write():
            for message in self.session.replay() if replaying else ():
                self._send(message)
            for message in held:
                self._send(message)

    def _failed(self, exc: Exception) -> None:
        wait = RETRY_S[min(self._failures, len(RETRY_S) - 1)]
        self._failures += 1
        self._retry_at = asyncio.get_running_loop().time() + wait
        log.error("lsp-coder: cannot reach the shared server: %s; trying again in %g s",
                  exc, wait)
        held, self._held = self._held or [], None
        if self._failures == 1:
            self._tell(f"lsp-coder: cannot reach the shared server: {exc}", 1)
        for message in held:
            self._unserved(message)

    async def _from_server(self, link: Link) -> None:
        frames = FrameReader()
        while True:
            try:
                data = await link.reader.read(READ_SIZE)
            except (OSError, ValueError):
                data = b""
            if self.link is not link:
                return  # already dropped
            if not data:
                if self.done is not None and not self.done.done():
                    self._drop_link()
                return
            for item in frames.feed(data):
                if isinstance(item, Message) and isinstance(item.value, dict):
                    self._from_server_message(item.value)

    def _from_server_message(self, message: dict) -> None:
        rid = message.get("id")
        if "method" in message:
            if "id" in message:
                self.asked.add(rid)
            self._to_editor(message)
            return
        if is_own_answer(rid):
            if "error" in message:
                self._tell(str(message["error"].get("message", "refused")), 1)
            return
        self.session.answered(message)
        self._to_editor(message)

    def _drop_link(self) -> None:
        """The server is gone: answer what waits on it, and reach a new one that is told the
        session as it is (a session that already shut down waits for its ``exit``)."""
        link, self.link = self.link, None
        if link is not None:
            link.writer.close()
        self.asked.clear()
        for rid, method in list(self.session.pending.items()):
            self._unserved({"jsonrpc": "2.0", "id": rid, "method": method})
        if self.session.shut_down:  # the server ends a session after its exit: expected
            log.debug("the shared server closed the session after its shutdown")
            return
        log.warning("the shared server went away; reaching a new one")
        self._tell("lsp-coder: the shared server stopped; starting a new one", 3)
        if self.session.initialize is not None and self._held is None:
            self._held = []
            asyncio.ensure_future(self._reach())

    def _tell(self, message: str, kind: int) -> None:
        """A log message (kind 3, info) or a message shown to the user (kind 1, error)."""
        method = "window/showMessage" if kind == 1 else "window/logMessage"
        self._to_editor({"jsonrpc": "2.0", "method": method,
                         "params": {"type": kind, "message": message}})


def _valid_id(rid: Any) -> bool:
    return isinstance(rid, (int, str)) and not isinstance(rid, bool)


def run_forwarder(base: Config, problem: str | None) -> int:
    """Forward this process's stdio to the shared server; returns the exit code."""
    forwarder = Forwarder(base, problem)
    return run_loop(forwarder.run)
