"""The workspace bench's folder of real files, and how it finds the parsing subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from lsp_coder.bench.workspace import _rss_tree_bytes, build_workspace


def test_the_workspace_is_the_standard_librarys_files_copied_round_robin(tmp_path: Path):
    written = build_workspace(tmp_path, 40)
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert written == len(files) == 40
    assert all(p.suffix == ".py" for p in files)
    assert {p.relative_to(tmp_path).parts[0] for p in files} <= {"pkg_0000", "pkg_0001"}
    assert any(p.stat().st_size > 0 for p in files)


def test_the_memory_of_a_child_started_by_another_thread_is_counted():
    """The index thread, not the main one, starts the parsing subprocess."""
    started: list[subprocess.Popen] = []
    program = ("import sys; b = bytearray(50_000_000); print('ready', flush=True);"
               " sys.stdin.read()")
    thread = threading.Thread(target=lambda: started.append(subprocess.Popen(
        [sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE)))
    thread.start()
    thread.join()
    child = started[0]
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        own, children = _rss_tree_bytes(os.getpid())
        assert own > 0 and children > 50_000_000
    finally:
        child.communicate(b"")
