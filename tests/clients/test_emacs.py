"""Emacs 28 with eglot (1.9 from Debian's elpa-eglot) gets lsp-coder's completion."""

from __future__ import annotations

import sys
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
USER_CONFIG = REPO_ROOT / "editors" / "emacs" / "lsp-coder.el"


def run_emacs(emacs: str, tmp_path: Path, cmd: list[str], model: Path,
              user_config: Path | None = None) -> dict:
    """Runs the eglot client script with the `emacs` program; returns what it wrote.

    With `user_config`, the eglot server entry comes from that file.
    """
    params, out = write_read_file_params(tmp_path, cmd, model, user_config,
                                         load_timeout_s=90, request_timeout_s=20)
    done = run_client([emacs, "--batch", "-l", str(SCRIPTS_DIR / "eglot_completion.el")],
                      timeout=TIMEOUT_S, cwd=tmp_path,
                      env=server_env(LSP_CODER_TEST_PARAMS=str(params), HOME=str(tmp_path)))
    assert not done.timed_out, done.describe()
    result = read_json_result(out, done)
    assert done.returncode == 0, done.describe()
    return result


def test_emacs_eglot_completion(emacs: str, tmp_path: Path, real_small_model: Path) -> None:
    """An eglot server entry of its own gets the `f.re` completion."""
    result = run_emacs(emacs, tmp_path, SERVER_CMD, real_small_model)
    assert result["eglot_version"].startswith("eglot"), result["eglot_version"]
    assert result["capabilities"].get("completionProvider"), result["capabilities"]
    assert result["stats"]["totals"]["model_loaded"] is True
    check_read_file_completion(result["result"])
    assert any(str(real_small_model) in m for m in result["messages"]), result["messages"]


def test_emacs_user_config(emacs: str, tmp_path: Path, real_small_model: Path) -> None:
    """editors/emacs/lsp-coder.el registers the server for python-mode.

    Its initializationOptions reach the server: the server loads the model they name.
    """
    result = run_emacs(emacs, tmp_path, SERVER_CMD, real_small_model, user_config=USER_CONFIG)
    assert any(str(real_small_model) in m for m in result["messages"]), result["messages"]
    check_read_file_completion(result["result"])


def test_emacs_harness_fails_on_a_broken_server(emacs: str, tmp_path: Path,
                                                real_small_model: Path) -> None:
    """A server that exits at once must fail the client test, not pass or skip it."""
    with pytest.raises(pytest.fail.Exception, match="Server died|exited"):
        run_emacs(emacs, tmp_path, [sys.executable, "-c", "raise SystemExit(3)"],
                  real_small_model)
