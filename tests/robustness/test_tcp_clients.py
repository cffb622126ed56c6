"""``--tcp`` serves several editors at once on one model: a client that disconnects leaves the
server waiting with its model loaded; the last one's ``exit`` (or ``shutdown``) ends it."""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time

from tests.robustness.conftest import tiny_options
from tests.robustness.rawclient import frame
from tests.robustness.test_lifecycle import _start_tcp


class SocketClient:
    """A JSON-RPC client on a TCP connection (answers the server's own requests with null)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self._buf = b""
        self._ids = itertools.count(1)
        self.notifications: list[dict] = []

    def send(self, value: dict) -> None:
        self.sock.sendall(frame(value))

    def call(self, method: str, params: dict | None = None) -> dict:
        rid = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            message = self._next()
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == rid and "method" not in message:
                return message

    def _next(self) -> dict:
        while b"\r\n\r\n" not in self._buf:
            self._recv()
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"Content-Length: *(\d+)", head).group(1))
        while len(self._buf) < length:
            self._recv()
        body, self._buf = self._buf[:length], self._buf[length:]
        return json.loads(body)

    def _recv(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self._buf += data

    def stats(self) -> dict:
        return self.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]

    def start(self, options: dict) -> dict:
        """initialize + initialized; returns the stats once no load is running."""
        answer = self.call("initialize", {"processId": None, "rootUri": None,
                                          "capabilities": {}, "initializationOptions": options})
        assert "capabilities" in answer["result"], answer
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        while True:
            totals = self.stats()["totals"]
            if not totals["loading"] and (totals["model_loaded"] or totals["error"]):
                return totals

    def loads(self) -> int:
        """How many model loads this client was told about."""
        return sum("loading model" in n.get("params", {}).get("message", "")
                   for n in self.notifications)

    def close(self) -> None:
        self.sock.close()


def test_tcp_serves_several_clients_at_once_and_one_after_another_on_one_model(tiny_qwen):
    proc, port, _ = _start_tcp("127.0.0.1:0")
    log: list[str] = []
    reader = threading.Thread(target=lambda: log.extend(
        line.decode() for line in iter(proc.stderr.readline, b"")), daemon=True)
    reader.start()
    options = tiny_options(tiny_qwen)
    try:
        first = SocketClient(port)
        assert first.start(options)["model_loaded"] and first.loads() == 1
        second = SocketClient(port)  # while the first is connected
        totals = second.start(options)
        assert totals["model_loaded"] and totals["editors"] == 2, totals
        assert second.loads() == 0  # the model is shared, not loaded again
        for n, client in enumerate((first, second)):
            uri = f"file:///tmp/tcp{n}.py"
            client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                 "text": "def add(a, b):\n    return "}}})
            answer = client.call("textDocument/inlineCompletion", {
                "textDocument": {"uri": uri}, "position": {"line": 1, "character": 11},
                "context": {"triggerKind": 1}})
            assert "result" in answer, answer
        first.close()  # the editor goes away without shutdown or exit: the server stays
        deadline = time.monotonic() + 30
        while second.stats()["totals"]["editors"] != 1:
            assert time.monotonic() < deadline, "the first editor's session never ended"
            time.sleep(0.05)

        third = SocketClient(port)
        assert third.start(options)["model_loaded"] and third.loads() == 0
        third.send({"jsonrpc": "2.0", "method": "exit"})  # one of two: the server goes on
        assert "result" in second.call("workspace/executeCommand",
                                       {"command": "lspCoder.stats"})
        second.send({"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(30) == 1  # the last one's exit without shutdown ends the server
    finally:
        proc.kill()
        proc.wait()
    reader.join(10)
    assert "Traceback" not in "".join(log), "".join(log)


def test_tcp_a_client_that_shut_the_server_down_ends_it(tiny_qwen):
    proc, port, _ = _start_tcp("127.0.0.1:0")
    try:
        client = SocketClient(port)
        client.start(tiny_options(tiny_qwen))
        assert "result" in client.call("shutdown")
        client.close()  # shutdown, then gone without exit: the server ends with code 0
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.wait()
