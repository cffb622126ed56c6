"""Helpers for the shared-server tests: forwarders in a private runtime folder, and what its
shared servers say of themselves."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from lsp_coder.server.lifecycle import process_alive
from tests.conftest import server_env
from tests.robustness.rawclient import RawServer


def editors_env(**extra: str) -> dict[str, str]:
    """An environment whose forwarders share one private runtime folder (and whose shared
    server exits with its last editor)."""
    return server_env(**extra)


def daemon_status(env: dict[str, str]) -> list[dict]:
    """``lsp-coder daemon status --json`` in ``env``'s runtime folder."""
    done = subprocess.run([sys.executable, "-m", "lsp_coder", "daemon", "status", "--json"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def daemon_pids(env: dict[str, str]) -> list[int]:
    """The pids of the shared servers running in ``env``'s runtime folder."""
    pids = []
    for info in Path(env["LSP_CODER_RUNTIME_DIR"]).glob("server-*.json"):
        try:
            pid = json.loads(info.read_text())["pid"]
        except (OSError, ValueError, KeyError):
            continue
        if process_alive(pid):
            pids.append(pid)
    return sorted(pids)


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs (Linux). A child is listed under the thread
    that started it (the workspace index's thread starts its parser), so every thread's
    list is read."""
    found = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children = listing.read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def pid_gone(pid: int) -> bool:
    return not process_alive(pid)


def wait_until(predicate: Callable[[], bool], timeout_s: float = 60.0) -> bool:
    """Poll ``predicate`` until it holds (True) or the time is up (False)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def open_doc(srv: RawServer, uri: str, text: str) -> None:
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}})


def complete(srv: RawServer, uri: str, line: int, character: int,
             open_text: str | None = None) -> dict:
    """An inline completion as typing asks it at ``line:character`` (opening ``uri`` with
    ``open_text`` first, if given)."""
    if open_text is not None:
        open_doc(srv, uri, open_text)
    return srv.call("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character},
        "context": {"triggerKind": 2}})



