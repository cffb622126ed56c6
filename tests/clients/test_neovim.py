"""Neovim's built-in LSP client gets lsp-coder's completions as menu items: Debian's 0.7 through
`vim.lsp.start_client`, and through the plugin set up without ghost text (the omnifunc).

The plugin's ghost text is tested in test_neovim_ghost.py."""

from __future__ import annotations

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
from tests.conftest import server_env

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

TIMEOUT_S = 120
PLUGIN_ROOT = REPO_ROOT / "editors" / "neovim"


def run_nvim(nvim: str, tmp_path: Path, cmd: list[str], model: Path,
             plugin: bool = False) -> dict:
    """Runs the Lua client script with the `nvim` program; returns what it wrote.

    With `plugin`, the script loads editors/neovim as a plugin and lets it start the server.
    """
    extra = {"plugin_root": str(PLUGIN_ROOT)} if plugin else {}
    params, out = write_read_file_params(tmp_path, cmd, model, None, load_timeout_ms=90_000,
                                         request_timeout_ms=20_000, **extra)
    done = run_client(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
         "-c", f"luafile {SCRIPTS_DIR / 'nvim_completion.lua'}"],
        timeout=TIMEOUT_S, cwd=tmp_path,
        env=server_env(LSP_CODER_TEST_PARAMS=str(params), XDG_STATE_HOME=str(tmp_path),
                       XDG_CACHE_HOME=str(tmp_path)),
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


def test_neovim_harness_fails_on_a_broken_server(nvim: str, tmp_path: Path,
                                                 real_small_model: Path) -> None:
    """A server that cannot start must fail the client test, not pass or skip it."""
    with pytest.raises(pytest.fail.Exception, match="start_client"):
        run_nvim(nvim, tmp_path, ["lsp-coder-does-not-exist"], real_small_model)
