"""The lifecycle as LSP says, over real stdio: codes before initialize and after shutdown, exit
codes, closing stdin, signals (also mid-generation), the editor's process dying, --tcp."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.conftest import server_env
from tests.robustness.conftest import tiny_options
from tests.robustness.rawclient import SERVER, RawServer, frame

EXIT_WITHIN_S = 2.0


def assert_exits(srv: RawServer, code: int) -> None:
    start = time.monotonic()
    assert srv.exit_code(timeout=10) == code
    assert time.monotonic() - start < EXIT_WITHIN_S
    srv.stdout_closed.wait(5)
    assert not any("Traceback" in line for line in srv.stderr), "".join(srv.stderr)


def test_requests_before_initialize_get_32002_and_notifications_are_dropped(fresh):
    srv = fresh()
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": "file:///a.py", "languageId": "python", "version": 1, "text": "x"}})
    answer = srv.call("textDocument/completion", {
        "textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}})
    assert answer["error"]["code"] == -32002
    assert srv.call("shutdown")["error"]["code"] == -32002
    assert "result" in srv.initialize({"model": {"path": "/nonexistent.gguf"}})
    assert srv.count(None) == 0 and srv.popups() == []


def test_after_shutdown_requests_get_32600_and_exit_is_0(fresh):
    srv = fresh()
    srv.initialize({"model": {"path": "/nonexistent.gguf"}})
    assert srv.call("shutdown")["result"] is None
    answer = srv.call("textDocument/completion", {
        "textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}})
    assert answer["error"]["code"] == -32600
    assert srv.call("shutdown")["error"]["code"] == -32600
    srv.notify("exit")
    assert_exits(srv, 0)


def test_exit_without_shutdown_is_1(fresh):
    srv = fresh()
    srv.initialize({"model": {"path": "/nonexistent.gguf"}})
    srv.notify("exit")
    assert_exits(srv, 1)


@pytest.mark.parametrize("shutdown_first,code", [(False, 1), (True, 0)])
def test_closing_stdin_ends_the_process(fresh, shutdown_first, code):
    srv = fresh()
    srv.initialize({"model": {"path": "/nonexistent.gguf"}})
    if shutdown_first:
        assert "result" in srv.call("shutdown")
    srv.proc.stdin.close()
    assert_exits(srv, code)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_end_the_process_quietly(fresh, sig):
    srv = fresh()
    srv.initialize({"model": {"path": "/nonexistent.gguf"}})
    srv.ping()
    srv.signal(sig)
    assert_exits(srv, 1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, None])
def test_ending_mid_generation(fresh, tiny_qwen, sig):
    srv = fresh()
    options = tiny_options(tiny_qwen, max_tokens=4096, max_lines=10_000)
    options["model"]["n_ctx"] = 8192
    srv.initialize(options)
    srv.wait_for_model()
    uri = "file:///tmp/long.py"
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": "def f():\n    "}})
    srv.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 4},
        "context": {"triggerKind": 1}})
    deadline = time.monotonic() + 30
    while not srv.call("workspace/executeCommand",
                       {"command": "lspCoder.stats"})["result"]["totals"]["busy"]:
        assert time.monotonic() < deadline, "the generation never started"
    if sig is None:
        srv.proc.stdin.close()
    else:
        srv.signal(sig)
    assert_exits(srv, 1)


def test_the_editor_process_dying_ends_the_server(fresh):
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        srv = fresh()
        srv.initialize({"model": {"path": "/nonexistent.gguf"}}, process_id=editor.pid)
        srv.ping()
        assert srv.proc.poll() is None
        editor.kill()
        editor.wait()
        assert srv.exit_code(timeout=5) == 1
    finally:
        editor.kill()
        editor.wait()


# -- --tcp ----------------------------------------------------------------------------------------

def _start_tcp(address: str) -> tuple[subprocess.Popen, int, str]:
    proc = subprocess.Popen([*SERVER, "--tcp", address], stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=server_env())
    lines = []
    for raw in iter(proc.stderr.readline, b""):
        line = raw.decode()
        lines.append(line)
        if (found := re.search(r"listening on (\S+) port (\d+)", line)):
            return proc, int(found.group(2)), "".join(lines)
    proc.wait(10)
    raise AssertionError("".join(lines))


def _initialize_over(host: str, port: int) -> dict:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect((host, port))
        sock.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": None, "capabilities": {},
            "initializationOptions": {"model": {"path": "/nonexistent.gguf"}}}}))
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, body = data.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"Content-Length: *(\d+)", head).group(1))
        while len(body) < length:
            body += sock.recv(65536)
        sock.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        return json.loads(body[:length])


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("address,host", [
    ("127.0.0.1:0", "127.0.0.1"),
    ("0", "127.0.0.1"),  # a bare port binds loopback
    pytest.param("[::1]:0", "::1", marks=pytest.mark.skipif(
        not _has_ipv6_loopback(), reason="no IPv6 loopback on this machine")),
])
def test_tcp_serves_on_the_given_address(address, host):
    proc, port, log = _start_tcp(address)
    try:
        answer = _initialize_over(host, port)
        assert "capabilities" in answer["result"]
        assert proc.wait(10) == 1  # exit without shutdown
        assert "beyond this machine" not in log
    finally:
        proc.kill()
        proc.wait()


def test_tcp_on_all_interfaces_warns():
    proc, port, log = _start_tcp("0.0.0.0:0")
    proc.kill()
    proc.wait()
    assert "beyond this machine" in log


@pytest.mark.parametrize("address", ["localhost", "99999", "127.0.0.1:99999", "::1:2087",
                                     "[::1]", "[nonsense]:80", "host name:80", "abc:def"])
def test_a_bad_tcp_address_is_one_line(address):
    done = subprocess.run([*SERVER, "--tcp", address], capture_output=True, env=server_env(),
                          timeout=60)
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and address in lines[0], lines
