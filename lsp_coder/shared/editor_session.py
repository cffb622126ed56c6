"""What the forwarder keeps of one editor's session, so a new shared server can be told it.

The editor's ``initialize`` request, whether it sent ``initialized``, its settings layers
merged in order, its open documents (``documents``) and its requests still waiting for an
answer. A new server is told the session as the editor left it (``replay``); the forwarder
itself only moves bytes.
"""

from __future__ import annotations

from typing import Any

from ..config.layers import merge_layers, settings_layer
from .documents import Documents

OWN_ID = "lsp-coder-forwarder-initialize-"
"""Prefix of the ids of the forwarder's own requests (a replayed ``initialize``)."""


class EditorSession:
    """One editor's session as a new server would need it."""

    def __init__(self) -> None:
        self.documents = Documents()
        """The open documents at the editor's versions."""
        self.initialize: dict | None = None
        """The editor's ``initialize`` request, once seen."""
        self.initialized = False
        """Whether the editor sent ``initialized``."""
        self.layers: dict[str, Any] = {}
        """``initializationOptions`` and each ``didChangeConfiguration`` merged, in order."""
        self.pending: dict[Any, str] = {}
        """The editor's requests relayed and not yet answered: id -> method."""
        self.shutdown_id: Any = None
        """The id of the editor's ``shutdown`` request, once sent."""
        self.shut_down = False
        """Whether ``shutdown`` was answered."""
        self.replays = 0
        """How many times the session was told to a new server."""

    def editor_pid(self) -> int | None:
        """The editor's process id from its ``initialize``, if it gave one."""
        params = (self.initialize or {}).get("params")
        pid = params.get("processId") if isinstance(params, dict) else None
        return pid if isinstance(pid, int) else None

    def follow(self, message: dict, method: str, request: bool) -> None:
        """Note what the editor's message ``method`` changes (``request``: it has an id)."""
        params = message.get("params")
        if method == "initialize" and request and self.initialize is None:
            self.initialize = message
            self.layers = merge_layers({}, settings_layer(_options(params)))
        elif method == "initialized":
            self.initialized = True
        elif method == "workspace/didChangeConfiguration" and isinstance(params, dict):
            self.layers = merge_layers(self.layers, settings_layer(params.get("settings")))
        elif method.startswith("textDocument/did") and self.initialize is not None:
            self.documents.note(method, params)
        if request:
            self.pending[message["id"]] = method
            if method == "shutdown":
                self.shutdown_id = message["id"]

    def answered(self, message: dict) -> None:
        """Note the server's answer to one of the editor's requests."""
        rid = message.get("id")
        method = self.pending.pop(rid, None)
        if method == "initialize":
            caps = (message.get("result") or {}).get("capabilities") or {}
            self.documents.encoding = caps.get("positionEncoding") or "utf-16"
        if method == "shutdown" or (rid is not None and rid == self.shutdown_id):
            self.shut_down = True

    def replay(self) -> list[dict]:
        """The messages that tell a new server the session as the editor left it: its
        ``initialize`` with the settings merged, ``initialized``, the open documents."""
        assert self.initialize is not None
        self.replays += 1
        params = dict(self.initialize.get("params") or {})
        params["initializationOptions"] = self.layers
        messages = [{"jsonrpc": "2.0", "id": f"{OWN_ID}{self.replays}",
                     "method": "initialize", "params": params}]
        if self.initialized:
            messages.append({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        messages.extend({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                         "params": tracked.opened()} for tracked in self.documents.open.values())
        return messages


def is_own_answer(rid: Any) -> bool:
    """Whether ``rid`` answers the forwarder's own request, not the editor's."""
    return isinstance(rid, str) and rid.startswith(OWN_ID)


def _options(params: Any) -> Any:
    return params.get("initializationOptions") if isinstance(params, dict) else None
