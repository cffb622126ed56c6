"""A raw JSON-RPC client of the real server over stdio: it can send any bytes at all.

Synchronous (a reader thread collects the server's messages), so hypothesis can drive it.
Every response is kept per id, so a test can assert that each request got exactly one.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

SERVER = [sys.executable, "-m", "lsp_coder"]
MISSING = object()


def frame(value: Any) -> bytes:
    body = json.dumps(value).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    """The server process, its responses by id and its notifications."""

    def __init__(self, env: dict[str, str], args: tuple[str, ...] = (),
                 command: list[str] | None = None, cwd: str | None = None) -> None:
        self.proc = subprocess.Popen([*(command or SERVER), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     cwd=cwd)
        self.responses: dict[Any, list[dict]] = {}
        self.notifications: list[dict] = []
        self.stderr: list[str] = []
        self.stdout_closed = threading.Event()
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1000)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- sending --------------------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, value: Any) -> None:
        self.send_bytes(frame(value))

    def notify(self, method: str, params: Any = MISSING) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not MISSING:
            message["params"] = params
        self.send(message)

    def request(self, method: str, params: Any = MISSING, rid: Any = None) -> Any:
        """Send a request; returns its id."""
        rid = next(self._ids) if rid is None else rid
        message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not MISSING:
            message["params"] = params
        self.send(message)
        return rid

    def call(self, method: str, params: Any = MISSING, timeout: float = 60.0) -> dict:
        """A request and its (first) response."""
        return self.response(self.request(method, params), timeout)

    # -- receiving ------------------------------------------------------------------------------

    def response(self, rid: Any, timeout: float = 60.0) -> dict:
        with self._cond:
            if not self._cond.wait_for(lambda: rid in self.responses or self.stdout_closed.is_set(),
                                       timeout):
                raise TimeoutError(f"no response to {rid!r} within {timeout} s")
            if rid not in self.responses:
                raise EOFError(f"the server closed stdout before answering {rid!r}: "
                               + "".join(self.stderr[-20:]))
            return self.responses[rid][0]

    def count(self, rid: Any) -> int:
        with self._cond:
            return len(self.responses.get(rid, []))

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def popups(self) -> list[str]:
        """The text of every ``window/showMessage`` so far."""
        with self._cond:
            return [n["params"]["message"] for n in self.notifications
                    if n.get("method") == "window/showMessage"]

    def ping(self, timeout: float = 60.0) -> dict:
        """A request the server always answers (proof that it is alive and reading)."""
        answer = self.call("workspace/executeCommand", {"command": "lspCoder.health"}, timeout)
        assert "result" in answer, answer
        return answer["result"]

    # -- lifecycle ------------------------------------------------------------------------------

    def initialize(self, options: dict | None = None, process_id: int | None = None,
                   capabilities: dict | None = None) -> dict:
        answer = self.call("initialize", {
            "processId": process_id, "rootUri": None,
            "capabilities": capabilities if capabilities is not None else {
                "window": {"workDoneProgress": True}},
            "initializationOptions": options or {}})
        self.notify("initialized", {})
        return answer

    def wait_for_model(self, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            answer = self.call("workspace/executeCommand", {"command": "lspCoder.stats"})
            totals = answer["result"]["totals"]
            ended = (totals["model_loaded"] or totals["error"]) and not totals["loading"]
            if ended or time.monotonic() > deadline:
                return totals
            time.sleep(0.05)

    def exit_code(self, timeout: float = 10.0) -> int:
        return self.proc.wait(timeout)

    def signal(self, sig: int = signal.SIGTERM) -> None:
        os.kill(self.proc.pid, sig)

    def close(self) -> None:
        """Shut down politely if still running, then make sure the process is gone."""
        if self.proc.poll() is None:
            try:
                self.call("shutdown", timeout=10)
                self.notify("exit")
                self.proc.wait(10)
            except Exception:
                self.proc.kill()
                self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except Exception:
                pass

    # -- reader threads -------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                message = json.loads(out.read(length))
                self._received(message)
        finally:
            with self._cond:
                self.stdout_closed.set()
                self._cond.notify_all()

    def _received(self, message: dict) -> None:
        if "method" in message and "id" in message:  # a request to us: accept it
            try:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            except (OSError, ValueError):  # the test closed stdin meanwhile
                pass
        with self._cond:
            if "method" in message:
                self.notifications.append(message)
            else:
                self.responses.setdefault(message.get("id"), []).append(message)
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        for line in iter(self.proc.stderr.readline, b""):
            with self._cond:
                self.stderr.append(line.decode("utf-8", "replace"))
