"""No process outlives the server, however it ends, while its workspace index is being built:
``exit`` after ``shutdown``, SIGTERM, SIGKILL, the editor closing the pipes."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import server_env
from tests.robustness.rawclient import RawServer

GONE_WITHIN_S = 10.0


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` now (from /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != b"Z":
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """A workspace big enough that its index takes a while: 200 packages of 12 modules."""
    root = tmp_path_factory.mktemp("library")
    body = "".join(f"def helper_{i}(value, scale=2):\n    return value * scale + {i}\n\n"
                   for i in range(40))
    for p in range(200):
        package = root / f"pkg{p:03d}"
        package.mkdir()
        for m in range(12):
            (package / f"mod{m:02d}.py").write_text(f"class Thing{p}_{m}:\n    pass\n\n" + body)
    return root


@pytest.mark.parametrize("how", ["exit", "sigterm", "sigkill", "pipes"])
def test_no_process_outlives_a_server_ended_mid_index(library, how):
    """The server of one editor (``--no-shared``; the shared server's own test is
    ``tests/shared``)."""
    srv = RawServer(server_env(), ("--no-shared",))
    started: set[int] = set()
    try:
        answer = srv.call("initialize", {
            "processId": None, "rootUri": library.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": library.as_uri(), "name": library.name}],
            "initializationOptions": {"model": {"path": "/nonexistent.gguf"}}})
        assert "result" in answer, answer
        srv.notify("initialized", {})
        deadline = time.monotonic() + 60
        while not started:  # the index's parser is at work
            assert time.monotonic() < deadline, "the workspace index never started a parser"
            started = children(srv.proc.pid)
            time.sleep(0.05)
        index = srv.call("workspace/executeCommand", {"command": "lspCoder.stats"})
        assert not index["result"]["totals"]["workspace_index"]["ready"]  # still building
        if how == "exit":
            assert "result" in srv.call("shutdown")
            srv.notify("exit")
        elif how == "sigterm":
            srv.signal(signal.SIGTERM)
        elif how == "sigkill":
            srv.signal(signal.SIGKILL)
        else:  # the editor closes its end
            srv.proc.stdin.close()
        srv.proc.wait(timeout=30)
        deadline = time.monotonic() + GONE_WITHIN_S
        while any(alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = sorted(pid for pid in started if alive(pid))
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120]
                    for pid in left]
        assert not left, commands
    finally:
        for pid in started:  # what a failing run left behind (it holds the server's stderr)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        srv.close()
