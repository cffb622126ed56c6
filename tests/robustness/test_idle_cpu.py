"""An idle server uses no CPU: after its model loaded and a completion, ten quiet seconds cost
the process (all its threads) almost nothing. On a laptop that is battery."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.robustness.conftest import tiny_options

IDLE_S = 10.0
MAX_CPU_S = 0.05
"""A server that woke its loop 200 times a second used 0.1 s in 10 s here, 0.01 s after."""


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_an_idle_server_uses_no_cpu(fresh, tiny_qwen):
    srv = fresh()
    srv.initialize(tiny_options(tiny_qwen))
    assert srv.wait_for_model()["model_loaded"]
    uri = "file:///tmp/idle.py"
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": "def add(a, b):\n    return "}})
    answer = srv.call("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 11},
        "context": {"triggerKind": 1}})
    assert "result" in answer, answer

    def settled() -> bool:  # the idle work planned after the answer has run
        answer = srv.call("workspace/executeCommand", {"command": "lspCoder.stats"})
        totals = answer["result"]["totals"]
        return not (totals["busy"] or totals["idle_running"] or totals["idle_queued"])

    deadline = time.monotonic() + 60
    while not settled():
        assert time.monotonic() < deadline, "idle work did not finish"
        time.sleep(0.1)
    before = cpu_seconds(srv.proc.pid)
    time.sleep(IDLE_S)  # the measurement itself: nothing is sent meanwhile
    used = cpu_seconds(srv.proc.pid) - before
    assert used < MAX_CPU_S, f"{used:.2f} s of CPU in {IDLE_S:.0f} idle seconds"
