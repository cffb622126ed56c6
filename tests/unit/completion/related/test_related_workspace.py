"""The background workspace index: bounded, and silent about files it cannot use."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from lsp_coder.completion.related.workspace import WorkspaceIndex


def built(root: Path, max_files: int = 100, max_bytes: int = 10_000) -> WorkspaceIndex:
    index = WorkspaceIndex(max_files, max_bytes)
    index.set_roots((root,))
    assert index.wait_ready(120)
    return index


def names(index: WorkspaceIndex, *wanted: str) -> set[str]:
    return {w for w in wanted if index.lookup(w)}


def test_gitignored_hidden_and_vendored_folders_are_left_out(tmp_path, files):
    files(tmp_path, {
        ".gitignore": "generated/\n*.gen.js\n",
        "src/app.js": "function keptFn() {}\n",
        "src/out.gen.js": "function ignoredGen() {}\n",
        "generated/x.js": "function ignoredDir() {}\n",
        "node_modules/lib/index.js": "function vendoredFn() {}\n",
        ".hidden/y.js": "function hiddenFn() {}\n",
        "sub/.gitignore": "local.go\n",
        "sub/local.go": "package sub\nfunc IgnoredLocal() {}\n",
        "sub/main.go": "package sub\nfunc KeptGo() {}\n",
    })
    index = built(tmp_path)
    assert names(index, "keptFn", "KeptGo", "ignoredGen", "ignoredDir", "vendoredFn",
                 "hiddenFn", "IgnoredLocal") == {"keptFn", "KeptGo"}
    index.close()


def test_binary_huge_unreadable_files_and_symlink_loops_are_skipped(tmp_path, files):
    files(tmp_path, {"a.c": "int kept_c(void) { return 0; }\n",
                     "big.c": "int too_big(void) { return 0; }\n" + "//" * 20_000})
    (tmp_path / "bin.c").write_bytes(b"int binary_fn(void) { return 0; }\0\0")
    os.symlink(tmp_path, tmp_path / "loop")  # a folder linked into itself
    os.mkfifo(tmp_path / "pipe.c")  # reading it would block forever
    index = built(tmp_path)
    assert names(index, "kept_c", "too_big", "binary_fn") == {"kept_c"}
    assert index.stats().files == 1
    index.close()


def test_a_workspace_of_100000_files_is_walked_within_its_bounds(tmp_path):
    for folder in range(100):
        sub = tmp_path / f"d{folder:03}"
        sub.mkdir()
        for i in range(1000):
            (sub / f"f{i}.js").touch()
    index = built(tmp_path, max_files=500)
    stats = index.stats()
    assert stats.ready and stats.files == 500
    index.close()


def test_refresh_reads_changed_files_and_drops_vanished_ones(tmp_path, files):
    files(tmp_path, {"a.rs": "fn first_fn() {}\n", "b.rs": "fn second_fn() {}\n"})
    index = built(tmp_path)
    generation = index.generation
    (tmp_path / "a.rs").write_text("fn renamed_fn() {}\n")
    (tmp_path / "b.rs").unlink()
    index.refresh([tmp_path / "a.rs", tmp_path / "b.rs", Path("/elsewhere/c.rs")])
    deadline = time.monotonic() + 60
    while index.generation == generation:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert names(index, "first_fn", "second_fn", "renamed_fn") == {"renamed_fn"}
    index.close()


def test_a_batch_of_files_parsed_by_the_subprocess_is_indexed(tmp_path, files):
    files(tmp_path, {f"m{i}.go": f"package m\nfunc Fn{i}() {{}}\n" for i in range(40)})
    index = built(tmp_path)
    assert names(index, "Fn0", "Fn39") == {"Fn0", "Fn39"}
    index.close()


def test_a_folder_removed_mid_build_stops_its_build(tmp_path):
    """New folders stop the build of the old ones within a batch: the new folder is indexed
    without every old file being parsed first (48 s of CPU on a library folder before)."""
    old, new = tmp_path / "old", tmp_path / "new"
    body = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n" for i in range(30))
    for i in range(2000):
        folder = old / f"pkg{i // 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"def old_{i}():\n    pass\n\n" + body)
    new.mkdir()
    (new / "fresh.py").write_text("def fresh_name():\n    pass\n")
    index = WorkspaceIndex(5000, 100_000)
    index.set_roots((old,))
    deadline = time.monotonic() + 120
    while index.stats().parsed == 0:  # the old folder's build is under way
        assert time.monotonic() < deadline
        time.sleep(0.01)
    index.set_roots((new,))
    assert index.wait_ready(120)
    stats = index.stats()
    assert names(index, "fresh_name", "old_0") == {"fresh_name"} and stats.files == 1
    assert stats.parsed < 1000, stats  # the rest of the old build was never parsed
    index.close()


def test_closing_the_index_ends_its_parsing_process(tmp_path):
    for i in range(300):
        (tmp_path / f"m{i}.py").write_text("".join(f"def f{i}_{j}():\n    pass\n"
                                                   for j in range(40)))
    index = WorkspaceIndex(5000, 100_000)
    index.set_roots((tmp_path,))
    deadline = time.monotonic() + 120
    while index.parser_pid is None:  # the parser started
        assert time.monotonic() < deadline
        time.sleep(0.01)
    pid = index.parser_pid
    index.close()
    assert index.parser_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # ended and reaped: not even a zombie left
