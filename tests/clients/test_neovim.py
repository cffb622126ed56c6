"""Neovim's built-in LSP client gets lsp-coder's completions as menu items: Debian's 0.7 through
`vim.lsp.start_client`, and through the plugin set up without ghost text (the omnifunc).

The plugin's ghost text is tested in test_neovim_ghost.py."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.clients.conftest import (
    REPO_ROOT,
    SCRIPTS_DIR,
    SERVER_CMD,
    check_read_file_completion,
    read_json_result,
    run_client,
    write_read_file_params,
)
from tests.conftest import private_runtime_dir, server_env
from tests.shared.helpers import wait_until

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

TIMEOUT_S = 120
PLUGIN_ROOT = REPO_ROOT / "editors" / "neovim"


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
    """The plugin (editors/neovim on 'runtimepath', then setup{} without ghost text) starts
    the server on FileType, sets the omnifunc, which gets the suggestion as a completion item
    (a menu user keeps it), and `:LspCoder status` reports the loaded model.

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
