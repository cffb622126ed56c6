"""Neovim 0.7's built-in LSP client (`vim.lsp.start_client`) gets lsp-coder's completion."""

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
USER_CONFIG = REPO_ROOT / "editors" / "neovim" / "lsp-coder.lua"


def run_nvim(nvim: str, tmp_path: Path, cmd: list[str], model: Path,
             user_config: Path | None = None) -> dict:
    """Runs the Lua client script with the `nvim` program; returns what it wrote.

    With `user_config`, the script loads that file and lets it start the server.
    """
    params, out = write_read_file_params(tmp_path, cmd, model, user_config,
                                         load_timeout_ms=90_000, request_timeout_ms=20_000)
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


def test_neovim_user_config_legacy_path(nvim: str, tmp_path: Path,
                                        real_small_model: Path) -> None:
    """editors/neovim/lsp-coder.lua starts the server on FileType and sets the omnifunc.

    On this machine's Neovim 0.7 that is the file's oldest fallback (vim.lsp.start_client).
    """
    result = run_nvim(nvim, tmp_path, SERVER_CMD, real_small_model, user_config=USER_CONFIG)
    assert result["stats"]["totals"]["model_loaded"] is True
    check_read_file_completion(result["result"])
    assert any(str(real_small_model) in m for m in result["messages"]), result["messages"]


def test_neovim_harness_fails_on_a_broken_server(nvim: str, tmp_path: Path,
                                                 real_small_model: Path) -> None:
    """A server that cannot start must fail the client test, not pass or skip it."""
    with pytest.raises(pytest.fail.Exception, match="start_client"):
        run_nvim(nvim, tmp_path, ["lsp-coder-does-not-exist"], real_small_model)
