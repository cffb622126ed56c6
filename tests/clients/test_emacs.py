"""Emacs 28 with eglot (1.9 from Debian's elpa-eglot) gets lsp-coder's completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clients.conftest import (
    READ_FILE_CURSOR,
    READ_FILE_TEXT,
    SCRIPTS_DIR,
    SERVER_CMD,
    check_read_file_completion,
    init_options,
    read_json_result,
    require_program,
    run_client,
)
from tests.conftest import server_env

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

TIMEOUT_S = 120


def run_emacs(tmp_path: Path, cmd: list[str], model: Path) -> dict:
    """Runs the eglot client script; returns what it wrote."""
    emacs = require_program("emacs")
    source = tmp_path / "read_file.py"
    source.write_text(READ_FILE_TEXT, encoding="utf-8")
    out = tmp_path / "result.json"
    params = tmp_path / "params.json"
    line, character = READ_FILE_CURSOR
    params.write_text(json.dumps({
        "cmd": cmd,
        "init_options": init_options(model),
        "file": str(source),
        "line": line,
        "character": character,
        "load_timeout_s": 90,
        "request_timeout_s": 20,
        "out": str(out),
    }), encoding="utf-8")
    done = run_client([emacs, "--batch", "-l", str(SCRIPTS_DIR / "eglot_completion.el")],
                      timeout=TIMEOUT_S, cwd=tmp_path,
                      env=server_env(LSP_CODER_TEST_PARAMS=str(params), HOME=str(tmp_path)))
    assert not done.timed_out, done.describe()
    result = read_json_result(out, done)
    assert done.returncode == 0, done.describe()
    return result


def test_emacs_eglot_completion(tmp_path: Path, real_small_model: Path) -> None:
    result = run_emacs(tmp_path, SERVER_CMD, real_small_model)
    assert result["eglot_version"].startswith("eglot"), result["eglot_version"]
    assert result["capabilities"].get("completionProvider"), result["capabilities"]
    assert result["stats"]["totals"]["model_loaded"] is True
    check_read_file_completion(result["result"])
