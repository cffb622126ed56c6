"""One shared server behind every editor's forwarder: one model, a session per editor.

Each test starts its own forwarders in a private runtime folder (so its shared server is its
own), with the server exiting as soon as its last editor leaves.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_coder.server.scheduler import MAX_PENDING
from tests.robustness.conftest import tiny_options
from tests.robustness.rawclient import RawServer, frame
from tests.shared.helpers import (
    complete,
    daemon_pids,
    daemon_status,
    descendants,
    editors_env,
    open_doc,
    pid_gone,
    wait_until,
)

TEXT = "def add(a, b):\n    return "


@pytest.fixture
def editors():
    """Start forwarders (editors) that share one private runtime folder."""
    env = editors_env()
    started: list[RawServer] = []

    def start(*args: str) -> RawServer:
        srv = RawServer(env, args)
        started.append(srv)
        return srv

    start.env = env
    yield start
    for srv in started:
        srv.close()
    for pid in daemon_pids(env):
        os.kill(pid, signal.SIGKILL)


def test_two_editors_share_one_model_and_keep_their_own_documents(editors, tiny_qwen):
    a, b = editors(), editors()
    assert "result" in a.initialize(tiny_options(tiny_qwen))
    assert a.wait_for_model()["model_loaded"]
    assert "result" in b.initialize(tiny_options(tiny_qwen))
    totals = b.wait_for_model()
    assert totals["model_loaded"] and totals["editors"] == 2, totals
    loads = [n for n in b.notifications if "loading model" in json.dumps(n)]
    assert loads == []  # the second editor found the model loaded
    (status,) = daemon_status(editors.env)
    assert status["editors"] == 2 and len(status["models"]) == 1, status
    assert status["models"][0]["editors"] == 2

    open_doc(a, "file:///tmp/only_a.py", TEXT)
    assert "result" in complete(a, "file:///tmp/only_a.py", 1, 11)
    # b's session has no such document: its request is answered empty, and its own server
    # copy of documents does not hold a's.
    assert complete(b, "file:///tmp/only_a.py", 1, 11)["result"] is None
    seen = b.call("workspace/executeCommand", {"command": "lspCoder.document",
                                                "arguments": ["file:///tmp/only_a.py"]})
    assert seen["result"] is None
    status_b = b.call("workspace/executeCommand", {"command": "lspCoder.status"})["result"]
    assert status_b["shared"] is True and status_b["editors"] == 2
    # Each session's statistics count its own requests only.
    totals_a = a.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]
    totals_b = b.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]
    assert totals_a["totals"]["requests"] == 1 and totals_b["totals"]["requests"] == 0


def test_the_same_file_in_two_editors_is_read_once(editors, tiny_qwen):
    text = "".join(f"def helper_{i}(x):\n    return x * {i}\n\n" for i in range(40)) + TEXT
    line = text.count("\n")
    a, b = editors(), editors()
    options = tiny_options(tiny_qwen)
    options["idle"] = {"cold_prompt_ms": 0}  # the full prompt in both (no timing-based choice)
    for srv in (a, b):
        srv.initialize(options)
        assert srv.wait_for_model()["model_loaded"]
    open_doc(a, "file:///tmp/same.py", text)
    complete(a, "file:///tmp/same.py", line, 11)
    open_doc(b, "file:///tmp/same.py", text)
    complete(b, "file:///tmp/same.py", line, 11)
    first = a.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]
    second = b.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]
    prompt_a = first["recent"][-1]
    prompt_b = second["recent"][-1]
    assert prompt_a["evaluated_tokens"] > 100, prompt_a
    assert prompt_b["reused_tokens"] >= prompt_a["evaluated_tokens"] - 40, prompt_b


def test_two_forwarders_starting_at_once_make_one_server(editors, tiny_qwen):
    started = [editors() for _ in range(3)]
    ids = [srv.request("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                      "initializationOptions": tiny_options(tiny_qwen)})
           for srv in started]
    for srv, rid in zip(started, ids):
        assert "result" in srv.response(rid)
        srv.notify("initialized", {})
    assert len(daemon_pids(editors.env)) == 1
    (status,) = daemon_status(editors.env)
    assert status["editors"] == 3


def test_an_editor_killed_frees_its_session(editors, tiny_qwen):
    a, b = editors(), editors()
    for srv in (a, b):
        srv.initialize(tiny_options(tiny_qwen))
        srv.wait_for_model()
    b.signal(signal.SIGKILL)
    b.proc.wait(10)
    assert wait_until(lambda: daemon_status(editors.env)[0]["editors"] == 1)
    assert a.call("workspace/executeCommand",
                  {"command": "lspCoder.status"})["result"]["editors"] == 1


def test_the_server_exits_with_its_last_editor(editors, tiny_qwen):
    a = editors()
    a.initialize(tiny_options(tiny_qwen))
    a.wait_for_model()
    (pid,) = daemon_pids(editors.env)
    a.close()
    assert wait_until(lambda: pid_gone(pid), 30)
    folder = Path(editors.env["LSP_CODER_RUNTIME_DIR"])
    assert not list(folder.glob("*.sock")) and not list(folder.glob("*.json"))


def test_a_killed_server_is_replaced_and_the_editor_goes_on(editors, tiny_qwen):
    a = editors()
    a.initialize(tiny_options(tiny_qwen))
    assert a.wait_for_model()["model_loaded"]
    uri = "file:///tmp/survive.py"
    open_doc(a, uri, TEXT)
    a.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"range": {
                                            "start": {"line": 1, "character": 11},
                                            "end": {"line": 1, "character": 11}},
                                            "text": "a + "}]})
    (old,) = daemon_pids(editors.env)
    pending = a.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 15},
        "context": {"triggerKind": 1}})
    os.kill(old, signal.SIGKILL)
    answer = a.response(pending)  # answered: a result or an error, never silence
    assert "result" in answer or "error" in answer, answer
    assert wait_until(lambda: daemon_pids(editors.env) not in ([], [old]), 60)
    totals = a.wait_for_model()
    assert totals["model_loaded"], totals
    seen = a.call("workspace/executeCommand", {"command": "lspCoder.document",
                                                "arguments": [uri]})["result"]
    assert seen is not None and seen["version"] == 2 and seen["units"] == TEXT + "a + "
    assert "result" in complete(a, uri, 1, 15)
    assert "result" in a.call("shutdown")


def test_a_server_gone_after_shutdown_is_no_news_and_not_replaced(editors, tiny_qwen):
    a = editors()
    a.initialize(tiny_options(tiny_qwen))
    assert a.wait_for_model()["model_loaded"]
    (server,) = daemon_pids(editors.env)
    assert "result" in a.call("shutdown")
    os.kill(server, signal.SIGKILL)
    assert wait_until(lambda: pid_gone(server), 30)
    a.notify("exit")
    assert a.proc.wait(10) == 0 and a.stdout_closed.wait(10)
    assert not [n for n in a.notifications if "starting a new one" in str(n)], a.notifications
    assert not [line for line in a.stderr if "went away" in line], a.stderr
    assert daemon_pids(editors.env) == []


def test_a_client_that_stops_reading_is_dropped_and_others_go_on(editors, tiny_qwen):
    a = editors()
    a.initialize(tiny_options(tiny_qwen))
    assert a.wait_for_model()["model_loaded"]
    (status,) = daemon_status(editors.env)
    (path,) = Path(editors.env["LSP_CODER_RUNTIME_DIR"]).glob("*.sock")
    with socket.socket(socket.AF_UNIX) as stuck:
        stuck.connect(str(path))
        stuck.sendall(frame({"lspCoder": "hello", "build": status["build"], "config": {},
                             "cwd": "/"}))
        assert b"welcome" in stuck.recv(4096)
        stuck.sendall(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "processId": None, "rootUri": None, "capabilities": {},
            "initializationOptions": tiny_options(tiny_qwen)}}))
        ask = b"".join(frame({"jsonrpc": "2.0", "id": n, "method": "workspace/executeCommand",
                              "params": {"command": "lspCoder.stats"}})
                       for n in range(1, 20001))
        stuck.settimeout(120)
        try:
            stuck.sendall(ask)  # it never reads: the server's answers pile up for it
        except OSError:
            pass  # dropped before it sent them all
        for n in range(3):  # the other editor is answered meanwhile
            assert "result" in complete(a, f"file:///tmp/a{n}.py", 0, 4, open_text="x = ")
        assert wait_until(lambda: daemon_status(editors.env)[0]["sessions"] == 1, 120)
    log = next(Path(editors.env["LSP_CODER_RUNTIME_DIR"]).glob("*.log")).read_text()
    assert "has not read" in log and "dropping its session" in log


def test_runtime_folder_and_socket_are_the_users_alone(editors, tiny_qwen):
    a = editors()
    a.initialize(tiny_options(tiny_qwen))
    folder = Path(editors.env["LSP_CODER_RUNTIME_DIR"])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (sock,) = folder.glob("*.sock")
    assert stat.S_IMODE(sock.stat().st_mode) & 0o077 == 0
    for path in folder.glob("*.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    if os.getuid() != 0:
        pytest.skip("another user's connection needs root to try (setuid)")
    probe = subprocess.run(
        [sys.executable, "-c", "import os, socket, sys; os.setgid(65534); os.setuid(65534);"
         "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])", str(sock)],
        capture_output=True, text=True, timeout=30)
    assert probe.returncode != 0 and "Permission" in probe.stderr, probe


def test_over_tcp_a_client_without_the_token_is_refused(tiny_qwen):
    env = editors_env(LSP_CODER_SHARED_TCP="1")
    a = RawServer(env)
    try:
        a.initialize(tiny_options(tiny_qwen))
        assert a.wait_for_model()["model_loaded"]
        (info,) = Path(env["LSP_CODER_RUNTIME_DIR"]).glob("*.json")
        assert stat.S_IMODE(info.stat().st_mode) == 0o600
        port = json.loads(info.read_text())["port"]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(frame({"lspCoder": "hello", "build": "x", "token": "wrong"}))
            assert sock.recv(1000) == b""  # closed without a word
        assert daemon_status(env)[0]["editors"] == 1
    finally:
        a.close()


def test_no_shared_serves_in_this_process(editors, tiny_qwen):
    a = editors("--no-shared")
    a.initialize(tiny_options(tiny_qwen))
    totals = a.wait_for_model()
    assert totals["model_loaded"] and totals["editors"] == 1
    status = a.call("workspace/executeCommand", {"command": "lspCoder.status"})["result"]
    assert status["shared"] is False
    assert daemon_pids(editors.env) == []


def test_a_forwarder_of_another_version_starts_its_own_server(editors, tiny_qwen, tmp_path):
    import lsp_coder

    other = tmp_path / "other"
    shutil.copytree(Path(lsp_coder.__file__).parent, other / "lsp_coder",
                    ignore=shutil.ignore_patterns("__pycache__"))
    init = other / "lsp_coder" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9.9.9-'))
    a = editors()
    a.initialize(tiny_options(tiny_qwen))
    a.wait_for_model()
    env = dict(editors.env, PYTHONPATH=str(other))
    b = RawServer(env, cwd=str(tmp_path))  # not the checkout's folder: `-m` looks there first
    try:
        b.initialize(tiny_options(tiny_qwen))
        assert b.wait_for_model()["model_loaded"]
        builds = sorted(s["build"] for s in daemon_status(editors.env))
        assert len(builds) == 2 and builds[1].startswith("9.9.9-"), builds
        assert b.call("workspace/executeCommand",
                      {"command": "lspCoder.status"})["result"]["editors"] == 1
    finally:
        b.close()


def test_the_forwarder_loads_no_model(editors, tiny_qwen):
    a = editors()
    a.initialize(tiny_options(tiny_qwen))
    a.wait_for_model()
    maps = Path(f"/proc/{a.proc.pid}/maps").read_text()
    assert "llama" not in maps and "ggml" not in maps and tiny_qwen.name not in maps
    rss_kb = int(next(line.split()[1] for line in
                      Path(f"/proc/{a.proc.pid}/status").read_text().splitlines()
                      if line.startswith("VmRSS:")))
    assert rss_kb < 60_000, rss_kb


def test_a_chatty_editor_holds_a_bounded_share(editors, tiny_qwen):
    a, b = editors(), editors()
    for srv in (a, b):
        srv.initialize(tiny_options(tiny_qwen))
        assert srv.wait_for_model()["model_loaded"]
    burst = []
    for n in range(40):  # forty documents, a request on each, all at once
        uri = f"file:///tmp/chatty{n}.py"
        burst.append(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": TEXT}}}))
        burst.append(frame({"jsonrpc": "2.0", "id": f"c{n}",
                            "method": "textDocument/inlineCompletion", "params": {
                                "textDocument": {"uri": uri},
                                "position": {"line": 1, "character": 11},
                                "context": {"triggerKind": 2}}}))
    b.send_bytes(b"".join(burst))
    answer = complete(a, "file:///tmp/quiet.py", 1, 11, open_text=TEXT)
    assert "result" in answer
    for n in range(40):
        assert "result" in b.response(f"c{n}")  # every one answered...
    totals = b.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]
    assert totals["totals"]["superseded"] >= 40 - MAX_PENDING  # ...most of them at once
    recent_a = a.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]
    # answered by the model, not superseded (a random model's answer is hidden as unsure)
    assert recent_a["recent"][-1]["outcome"] in ("ok", "unsure"), recent_a["recent"][-1]


def test_editors_choosing_another_model_get_it_beside_the_first(editors, tiny_qwen,
                                                                 tiny_qwen_other_seed):
    a, b = editors(), editors()
    a.initialize(tiny_options(tiny_qwen))
    assert a.wait_for_model()["model_loaded"]
    b.initialize(tiny_options(tiny_qwen_other_seed))
    assert b.wait_for_model()["model_loaded"]
    (status,) = daemon_status(editors.env)  # one shared server...
    models = sorted((m["model"], m["editors"]) for m in status["models"])
    assert models == sorted([(str(tiny_qwen), 1), (str(tiny_qwen_other_seed), 1)]), status
    for srv in (a, b):  # ...where neither shares the other's model
        assert srv.call("workspace/executeCommand",
                        {"command": "lspCoder.status"})["result"]["editors"] == 1
    # b moves to a's model: it shares it, and b's former model, used by no one, is closed.
    b.notify("workspace/didChangeConfiguration",
             {"settings": {"model": {"path": str(tiny_qwen)}}})
    assert wait_until(lambda: len(daemon_status(editors.env)[0]["models"]) == 1)
    assert daemon_status(editors.env)[0]["models"][0]["editors"] == 2


@pytest.mark.parametrize("how", ["exit", "sigterm", "sigkill", "pipes"])
def test_no_process_is_left_however_the_editor_ends(editors, tiny_qwen, tmp_path, how):
    workspace = tmp_path / "project"  # a folder to index: the server starts parse workers
    workspace.mkdir()
    for n in range(400):
        (workspace / f"m{n}.py").write_text("".join(
            f"def f{n}_{k}(x):\n    return x + {k}\n\n" for k in range(200)))
    a = editors()
    answer = a.call("initialize", {"processId": None, "rootUri": workspace.as_uri(),
                                   "capabilities": {},
                                   "initializationOptions": tiny_options(tiny_qwen)})
    assert "result" in answer
    a.notify("initialized", {})
    assert wait_until(lambda: daemon_pids(editors.env), 30)
    (server,) = daemon_pids(editors.env)
    # Ended while its index is being built: the build starts at initialize and its parser
    # leaves when it ends (waiting for the model first let a quick build end before).
    assert wait_until(lambda: descendants(server), 30)
    family = {server, *descendants(server)}
    if how == "exit":
        a.call("shutdown")
        a.notify("exit")
    elif how == "sigterm":
        a.signal(signal.SIGTERM)
    elif how == "sigkill":
        a.signal(signal.SIGKILL)
    else:
        a.proc.stdin.close()
    a.proc.wait(10)
    family |= set(descendants(server))
    assert wait_until(lambda: all(pid_gone(pid) for pid in family), 60), [
        pid for pid in family if not pid_gone(pid)]
