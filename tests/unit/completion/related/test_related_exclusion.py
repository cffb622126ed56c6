"""What never reaches the model: ignore files, ``[context] exclude``, files holding secrets;
and files read for context never block (a FIFO, a terminal, a socket) nor hang the worker."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from lsp_coder.completion.related import exclusion
from lsp_coder.completion.related.bounded import BoundedCalls
from lsp_coder.completion.related.exclusion import Exclusion
from lsp_coder.completion.related.section import RelatedContext
from lsp_coder.completion.related.text import FileReads, read_regular
from lsp_coder.completion.related.workspace import WorkspaceIndex
from lsp_coder.config import Config, apply


@pytest.fixture
def repo(tmp_path, files) -> Path:
    """A git repository whose workspace folder is one of its subfolders."""
    root = files(tmp_path / "repo", {
        ".gitignore": "*.log\nbuild/\n",
        ".git/info/exclude": "notes.py\n",
        "app/.gitignore": "local_*.py\n!local_ok.py\n",
        "app/.lspcoderignore": "generated/\n",
        "app/main.py": "x = 1\n",
        "app/local_config.py": "TOKEN = 1\n",
        "app/local_ok.py": "y = 1\n",
        "app/notes.py": "n = 1\n",
        "app/run.log": "log\n",
        "app/generated/models.py": "m = 1\n",
        "app/build/out.py": "o = 1\n",
        "app/.env.production": "TOKEN=1\n",
        "app/deploy/id_ed25519": "key\n",
        "app/certs/server.pem": "pem\n",
        "app/credentials.json": "{}\n",
        "app/prod.env": "A=1\n",
        "app/.aws/config": "[default]\n",
    })
    return root


def test_ignore_files_exclude_and_secrets_name_why(repo):
    found = Exclusion()
    found.configure((repo / "app",), ["sql/", "*.sql", "/main.py"])
    why = {name: found.reason(repo / "app" / name) for name in (
        "main.py", "local_config.py", "local_ok.py", "notes.py", "run.log",
        "generated/models.py", "build/out.py", ".env.production", "deploy/id_ed25519",
        "certs/server.pem", "credentials.json", "prod.env", ".aws/config", "sql/q.py",
        "pkg/main.py")}
    assert why["main.py"] == "[context] exclude names it"  # anchored at the folder
    assert why["pkg/main.py"] is None and why["local_ok.py"] is None
    assert why["local_config.py"] == f".gitignore in {repo / 'app'} names it"
    assert why["notes.py"] == f".git/info/exclude in {repo} names it"
    assert why["run.log"].startswith(".gitignore") and why["build/out.py"].startswith(".git")
    assert "lspcoderignore" in why["generated/models.py"]
    for secret in (".env.production", "deploy/id_ed25519", "certs/server.pem",
                   "credentials.json", "prod.env", ".aws/config"):
        assert why[secret] == "it looks like a file that holds secrets", secret
    assert why["sql/q.py"] == "[context] exclude names it"


def test_an_edited_ignore_file_is_read_again(repo, monkeypatch):
    monkeypatch.setattr(exclusion, "RECHECK_S", 0.0)
    found = Exclusion()
    found.configure((repo / "app",), [])
    assert found.allows(repo / "app" / "main.py")
    (repo / "app" / ".lspcoderignore").write_text("generated/\nmain.py\n")
    assert not found.allows(repo / "app" / "main.py")


def test_every_source_leaves_excluded_files_out(files, tmp_path):
    """The nearby files, the imported modules, recently closed and open documents and the
    index: none shows a file the user excluded, ignored or that holds secrets."""
    root = files(tmp_path / "w", {
        ".gitignore": "pkg/local_config.py\n",
        ".lspcoderignore": "pkg/scratch.py\n",
        "pkg/__init__.py": "",
        "pkg/local_config.py": "def helper(width, height):\n    '''tok-gitignored'''\n",
        "pkg/scratch.py": "def helper2(width, height):\n    return 'tok-lspcoderignore'\n",
        "pkg/prod.py": "def helper3(width, height):\n    return 'tok-config'\n",
        "pkg/secrets.py": "def helper4(width, height):\n    return 'tok-secret'\n",
        "pkg/shapes.py": "def helper5(width, height):\n    return 'shown'\n",
    })
    config = apply(Config(), {"context": {"exclude": ["pkg/prod.py"]}}, "t")
    related = RelatedContext()
    related.set_roots([root.as_uri()], config)
    related.opened((root / "pkg" / "scratch.py").as_uri(),
                   "def helper2(width, height):\n    return 'tok-open-ignored'\n")
    related.opened((root / "pkg" / "secrets.py").as_uri(), "x = 1\n")
    related.closed((root / "pkg" / "secrets.py").as_uri())
    text = ("from pkg.local_config import helper\nfrom pkg import prod, shapes\n\n\n"
            "def area(width, height):\n    helper(width, height)\n    return ")
    uri = (root / "pkg" / "main.py").as_uri()
    assert related.index.wait_ready(60)
    section = related.section(uri, text, len(text), 4096, config)
    shown = "".join(body for _path, body in section.entries)
    assert "shown" in shown
    assert "tok-" not in shown, shown
    assert {path for path, _ in section.entries} <= {"pkg/shapes.py", "pkg/main.py"}
    assert related.excluded((root / "pkg" / "local_config.py").as_uri(), config)
    assert related.excluded(uri, config) is None
    related.close()


def test_the_index_leaves_excluded_files_out(files, tmp_path):
    root = files(tmp_path / "w", {".lspcoderignore": "gen/\n",
                                  "gen/a.go": "package a\nfunc Gen() {}\n",
                                  "src/b.go": "package b\nfunc Kept() {}\n",
                                  "src/c.go": "package b\nfunc Config() {}\n"})
    found = Exclusion()
    found.configure((root,), ["src/c.go"])
    index = WorkspaceIndex(100, 10_000, found.allows)
    index.set_roots((root,))
    assert index.wait_ready(60)
    assert [n for n in ("Gen", "Kept", "Config") if index.lookup(n)] == ["Kept"]
    index.close()


def never_blocks(path: Path) -> None:
    """``read_regular`` and ``FileReads`` answer None for ``path`` at once."""
    done = threading.Event()
    answers: list = []

    def read() -> None:
        answers.append(read_regular(path, 1 << 20))
        answers.append(FileReads(1 << 20, lambda _f, data: data, 4).get(path))
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(10), f"reading {path} blocked"
    assert answers == [None, None]


def test_a_fifo_a_terminal_and_a_socket_are_never_read(tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    never_blocks(fifo)
    leader, follower = os.openpty()
    try:
        link = tmp_path / "tty.py"
        link.symlink_to(os.ttyname(follower))
        never_blocks(link)
    finally:
        os.close(leader)
        os.close(follower)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock.py"))
        never_blocks(tmp_path / "sock.py")
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert read_regular(tmp_path / "ok.py", 100) == b"x = 1\n"
    assert read_regular(tmp_path / "ok.py", 3) is None  # too large
    (tmp_path / "bin.py").write_bytes(b"x\0y")
    assert read_regular(tmp_path / "bin.py", 100) is None


def test_a_call_that_hangs_costs_the_caller_its_limit_once():
    """A stand-in for a read on a hung network mount (which cannot be made here): the caller
    waits the limit once, then gets the default at once until the call returns."""
    release = threading.Event()
    calls = BoundedCalls(0.2, "reading")
    start = time.monotonic()
    assert calls.run(lambda: release.wait(30) and "late", "default") == "default"
    assert 0.2 <= time.monotonic() - start < 5
    start = time.monotonic()
    assert calls.run(lambda: "now", "default") == "default"  # the hung call still runs
    assert time.monotonic() - start < 0.1
    release.set()
    deadline = time.monotonic() + 10
    while calls.run(lambda: "now", "default") != "now":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with pytest.raises(ZeroDivisionError):
        calls.run(lambda: 1 / 0, "default")


def test_ignore_files_off_leaves_exclude_and_secrets(repo):
    found = Exclusion()
    found.configure((repo / "app",), ["*.sql"], ignore_files=False)
    assert found.reason(repo / "app" / "local_config.py") is None
    assert found.reason(repo / "app" / "notes.py") is None
    assert found.reason(repo / "app" / "q.sql") == "[context] exclude names it"
    assert found.reason(repo / "app" / ".env.production") is not None
    assert found.configure((repo / "app",), ["*.sql"], ignore_files=True)  # a change
    assert found.reason(repo / "app" / "local_config.py") is not None
