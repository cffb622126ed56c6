"""JSON-RPC in front of pygls: every request gets exactly one answer with the right code.

pygls parses and types a message inside its reader and, when that fails, shows the user a
popup and answers nothing. Here each message is checked before pygls sees it: not an object
or a bad id (-32600), before ``initialize`` (-32002), after ``shutdown`` (-32600), an unknown
method (-32601), params that do not fit the method's type (-32602). A malformed notification is
logged (method and reason, never the document text) and dropped. Only a well-formed message
reaches pygls's dispatch.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, lsp_method

from .document_store import Document, DocumentStore
from .framing import PARSE_ERROR, Damaged, Message, valid_id
from .json_values import json_kind, lsp_integer
from .menu_item import wants_menu_item

log = logging.getLogger(__name__)

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
MAX_METHOD_SHOWN = 100
"""Longer method names are cut in logs and error messages."""


class LspCoderProtocol(LanguageServerProtocol):
    """pygls's LSP protocol with message validation and LSP's lifecycle rules."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        converter.register_structure_hook(int, _strict_int)
        super().__init__(server, converter)
        self.initialize_received = False
        self.exit_code: int | None = None
        self.on_exit: Callable[[int], None] = lambda code: None
        self.documents = DocumentStore()
        self._done_handlers: list[tuple[Any, Any]] = []  # appended from any thread

    @property
    def shut_down(self) -> bool:
        """Whether ``shutdown`` was answered (``exit`` then ends the process with code 0)."""
        return self._shutdown

    def receive(self, item: Message | Damaged) -> None:
        """Handle one message (or damaged frame) from the reader."""
        self._forget_done_handlers()
        if isinstance(item, Damaged):
            log.warning("unreadable message from the client: %s", item.reason)
            if item.request_id is not None:
                self._error(item.request_id, PARSE_ERROR, f"Parse error: {item.reason}")
            return
        message = self._check(item)
        if message is not None:
            self.handle_message(message)

    # -- validation -----------------------------------------------------------------------------

    def _check(self, item: Message) -> Any | None:
        """The typed message, or None after answering (or logging) what is wrong with it."""
        value = item.value
        if not isinstance(value, dict):
            return self._invalid(None, f"expected a JSON object, got {json_kind(value)}")
        has_id = "id" in value
        rid = value.get("id")
        if has_id and not valid_id(rid):
            return self._invalid(
                None, f"an id must be an integer or a string, got {json_kind(rid)}")
        method = value.get("method")
        if value.get("jsonrpc") != "2.0":
            return self._invalid(rid, 'expected "jsonrpc": "2.0"') if has_id else None
        if method is None:
            return self._response(value) if has_id else None
        if not isinstance(method, str):
            return self._invalid(rid if has_id else None, "the method must be a string")
        if not item.utf8:
            if has_id:
                return self._error(rid, PARSE_ERROR, f"Parse error: {shown(method)}: not UTF-8")
            log.warning("%s: not UTF-8; invalid bytes replaced by U+FFFD", shown(method))
        if method == types.EXIT:  # honoured whatever else the message says, unless sent
            if has_id:           # as a request: answered like any other notification
                return self._invalid(rid, f"{method} is a notification")
            return types.ExitNotification(jsonrpc="2.0")
        if self._shutdown:
            if has_id:
                return self._error(rid, INVALID_REQUEST,
                                   f"{shown(method)}: the server is shut down")
            return None
        if not self.initialize_received:
            if method != types.INITIALIZE or not has_id:
                if has_id:
                    return self._error(rid, SERVER_NOT_INITIALIZED,
                                       f"{shown(method)}: the server is not initialized yet")
                log.info("dropped %s before initialize", shown(method))
                return None
        elif method == types.INITIALIZE:
            return self._invalid(rid, "initialize may only be sent once")
        message = self._typed(value, method, has_id)
        if message is not None and method == types.INITIALIZE:
            self.initialize_received = True
        return message

    def _typed(self, value: dict, method: str, has_id: bool) -> Any | None:
        """Structure the message into its lsprotocol type; answer -32601/-32602 on failure."""
        rid = value.get("id") if has_id else None
        kind = self.get_message_type(method)
        if kind is None:
            if method in self.fm.features:  # a custom method: pygls's generic message types
                return self.structure_message(value)
            if has_id:
                return self._error(rid, METHOD_NOT_FOUND, f"Method not found: {shown(method)}")
            if not method.startswith("$/"):
                log.info("ignored notification %s", shown(method))
            return None
        is_request_type = "id" in attrs.fields_dict(kind)
        if has_id != is_request_type:
            what = "a request" if is_request_type else "a notification"
            return self._invalid(rid, f"{method} is {what}") if has_id else None
        try:
            message = self._converter.structure(value, kind)
            if method == types.CANCEL_REQUEST and not valid_id(message.params.id):
                raise ValueError("the id to cancel must be an integer or a string")
            return message
        except Exception as exc:
            reason = _describe(exc)
            if has_id:
                return self._error(rid, INVALID_PARAMS, f"Invalid params for {method}: {reason}")
            log.warning("dropped %s with invalid params: %s", method, reason)
            return None

    def _response(self, value: dict) -> Any | None:
        """A response to one of our requests (progress tokens, ...)."""
        try:
            return self.structure_message(value)
        except Exception:
            log.warning("ignored a malformed response from the client")
            return None

    def _invalid(self, rid: Any, reason: str) -> None:
        return self._error(rid, INVALID_REQUEST, f"Invalid request: {reason}")

    def _error(self, rid: Any, code: int, message: str) -> None:
        log.warning("answered %s: %s", code, message)
        if rid is None:  # JSON-RPC wants "id": null, which lsprotocol's converter would omit
            self._send_data({"jsonrpc": "2.0", "id": None,
                             "error": {"code": code, "message": message}})
        else:
            self._send_response(rid, error=types.ResponseError(code=code, message=message))
        return None

    def _execute_handler(self, msg_id: Any, handler: Callable, callback: Callable,
                         args: Any = None, kwargs: Any = None) -> None:
        """As pygls's, but a handler's future is forgotten once it is done. pygls files the
        future of a notification's handler (and of each step of its generator handlers) under
        a fresh id and never removes it: one per ``didChange``, a leak of about 1 KiB a key.
        The next message removes them: a future can finish while pygls walks the table
        (``shutdown`` cancels them all), and in a thread of pygls's pool."""

        def finished(future: Any) -> None:
            self._done_handlers.append((msg_id, future))
            callback(future)

        super()._execute_handler(msg_id, handler, finished, args, kwargs)

    def handlers_in_flight(self) -> int:
        """How many requests and handlers the protocol still tracks (finished ones dropped)."""
        self._forget_done_handlers()
        return len(self._request_futures)

    def _forget_done_handlers(self) -> None:
        while self._done_handlers:
            msg_id, future = self._done_handlers.pop()
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        """As pygls's, but an error the handler means (bad params, unknown command) is answered
        and logged in one line, without a traceback."""
        if not future.cancelled() and isinstance(error := future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            self._error(msg_id, error.code, error.message)
            return
        super()._send_handler_result(future, msg_id=msg_id)

    # -- documents (our store replaces pygls's workspace copies) --------------------------------

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        self.documents.encoding = (self.workspace.position_encoding
                                   or types.PositionEncodingKind.Utf16)
        self.documents.open(params.text_document)
        self._index_in_steps(params.text_document.uri)
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        doc = self.documents.get(params.text_document.uri)
        if doc is None:
            log.info("ignored an edit of a document that is not open: %s",
                     params.text_document.uri)
            return
        for change in params.content_changes:
            doc.apply(change)
        doc.version = params.text_document.version
        self._index_in_steps(params.text_document.uri)
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    def _index_in_steps(self, uri: str, doc: Document | None = None) -> None:
        """Build the line index of ``uri``'s document a slice per loop turn, so a big
        document does not block the loop (a request that needs the index finishes it)."""
        current = self.documents.get(uri)
        if current is None or (doc is not None and current is not doc):
            return  # closed, or opened again: that one has its own steps
        if doc is None or not current.index_step():
            asyncio.get_running_loop().call_soon(self._index_in_steps, uri, current)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if not self.documents.close(params.text_document.uri):
            log.info("ignored closing a document that is not open: %s",
                     params.text_document.uri)
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield user_handler, (params,), None

    # -- lifecycle ------------------------------------------------------------------------------

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        """pygls's ``initialize``, without ``completionProvider`` for a client that draws the
        suggestion as ghost text (menu_item.py): its completion requests would only get empty
        lists, so it is not asked to send them."""
        result = yield from super().lsp_initialize(params)
        if not wants_menu_item(params.capabilities):
            result.capabilities.completion_provider = None
        return result

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args):
        """Stop serving: code 0 after ``shutdown``, 1 without (the transport ends the process)."""
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        self.exit_code = 0 if self._shutdown else 1
        self.on_exit(self.exit_code)


def shown(method: str) -> str:
    """A method name as logs and error messages show it: cut to ``MAX_METHOD_SHOWN``."""
    if len(method) <= MAX_METHOD_SHOWN:
        return method
    return f"{method[:MAX_METHOD_SHOWN]}... ({len(method)} characters)"


def _strict_int(value: Any, kind: type) -> int:
    """An LSP integer (``json_values.lsp_integer``): invalid params, not rounded or
    converted. ``bool`` (an int subclass) keeps cattrs's conversion."""
    if kind is not int:
        return kind(value)
    return lsp_integer(value)


def _describe(exc: Exception) -> str:
    """Where params do not fit their type, without echoing the values (they may be text)."""
    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(exc, path="$"))
    if isinstance(exc, ValueError):
        return str(exc)
    return type(exc).__name__
