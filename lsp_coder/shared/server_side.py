"""The forwarder's side toward the shared server: reaching it (or starting it) and telling it the
editor's session, the writes to it, what it sends, and what happens when it cannot be reached.

When the server goes away (it crashed, or was stopped), every request still waiting gets an
answer at once (``null`` where LSP allows it, else an error), a new server is reached or
started, told ``initialize`` (with the settings as they are now) and ``initialized`` again, and
every open document is opened in it at the editor's version: the editor goes on without a
restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Iterator

from ..config import Config
from ..config.converter import to_dict
from ..server.connection import READ_SIZE
from ..server.framing import FrameReader, Message
from .editor_session import EditorSession, is_own_answer
from .handshake import frame
from .runtime import Endpoint, idle_exit_s
from .spawn import Link, Refused, connect_or_start

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803
NULL_ANSWERS = frozenset({
    "textDocument/inlineCompletion", "textDocument/completion",
    "textDocument/documentHighlight", "shutdown"})
"""Requests whose answer may be ``null``: a server gone mid-request answers them so."""
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits before trying again to reach a server after failing to."""


class ServerSide:
    """``Forwarder``'s side toward the shared server (a part of it, not used alone).

    Its state is the forwarder's (set in ``Forwarder.__init__``).
    """

    cwd: str
    base: Config
    problem: str | None
    build: str
    session: EditorSession
    asked: set[Any]
    link: Link | None
    _held: list[dict] | None
    _batch: list[bytes] | None
    _retry_at: float
    _failures: int
    done: asyncio.Future[int] | None
    # The forwarder's too: _to_editor and _answer.

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
