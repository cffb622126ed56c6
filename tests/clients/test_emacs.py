"""Emacs 28 with eglot (1.9 from Debian's elpa-eglot) and lsp-mode (8.0) gets lsp-coder's
suggestion as a completion item: the menu (`lsp-coder-ghost-text' nil). The ghost text is
tested in test_emacs_ghost.py."""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path

import pytest

from tests.clients.conftest import (
    REPO_ROOT,
    SCRIPTS_DIR,
    SERVER_CMD,
    check_read_file_completion,
    init_options,
    read_json_result,
    run_client,
    write_read_file_params,
)
from tests.conftest import require_or_skip, server_env

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

TIMEOUT_S = 240
"""The model loads and the completion may be asked for again (each up to 90 s) on a busy machine."""
USER_CONFIG = REPO_ROOT / "editors" / "emacs" / "lsp-coder.el"


def run_emacs(emacs: str, tmp_path: Path, cmd: list[str], model: Path,
              user_config: Path | None = None, timeout: float = TIMEOUT_S,
              **extra: object) -> dict:
    """Runs the eglot client script with the `emacs` program; returns what it wrote.

    With `user_config`, the eglot server entry comes from that file; `extra` adds settings
    (such as a second server to run beside lsp-coder).
    """
    params, out = write_read_file_params(tmp_path, cmd, model, user_config,
                                         **{"load_timeout_s": 90, "request_timeout_s": 20,
                                            **extra})
    done = run_client([emacs, "--batch", "-l", str(SCRIPTS_DIR / "eglot_completion.el")],
                      timeout=timeout, cwd=tmp_path,
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
    """editors/emacs/lsp-coder.el registers the server for python-mode (set up for the menu:
    `lsp-coder-ghost-text` nil).

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


TWO_SERVERS_LOAD_S = 200
"""How long the scripts wait for the model, then for an answer holding both servers' items
(jedi-language-server's first completion infers `open()`: slow on a busy machine)."""
TWO_SERVERS_TIMEOUT_S = 2 * TWO_SERVERS_LOAD_S + 60
GET_RASS = "pip install rassumfrassum jedi-language-server (in lsp-coder's test extra)"


def python_program(name: str) -> str:
    """A program installed beside this Python (its environment's bin/), else on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        require_or_skip(f"{name!r} is not installed; to run this test: {GET_RASS}")
    return found


def lsp_coder_program(folder: Path) -> Path:
    """An `lsp-coder` program that runs this checkout's server (rass gives a server the
    settings under its program's name)."""
    program = folder / "lsp-coder"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} -m lsp_coder \"$@\"\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def test_emacs_eglot_beside_another_server(emacs: str, tmp_path: Path,
                                           real_small_model: Path) -> None:
    """lsp-coder.el's `lsp-coder-eglot-beside`: eglot runs jedi-language-server and lsp-coder
    through rassumfrassum; one completion in the buffer holds both servers' items, and eglot's
    `completion-at-point` offers jedi's names first, then lsp-coder's suggestion."""
    rass, jedi = python_program("rass"), python_program("jedi-language-server")
    ours = lsp_coder_program(tmp_path)
    # NOTE: rass answers a completion with what its servers sent within 3 s, so the hard budget
    # stays under that; a later request gets a suggestion finished in the meantime.
    options = init_options(real_small_model)
    options["completion"]["completion_budget_ms"] = 2000
    result = run_emacs(emacs, tmp_path, [str(ours)], real_small_model,
                       user_config=USER_CONFIG, timeout=TWO_SERVERS_TIMEOUT_S, beside=[jedi],
                       rass=rass, init_options=options, load_timeout_s=TWO_SERVERS_LOAD_S,
                       retry_s=3)
    items = result["result"]["items"] if isinstance(result["result"], dict) else result["result"]
    mine = [i for i in items if i.get("detail") == "lsp-coder"]
    theirs = [i for i in items if i.get("detail") != "lsp-coder"]
    assert len(mine) == 1, items
    assert {"read", "readline", "readlines"} <= {i["label"] for i in theirs}, items
    assert any(str(real_small_model) in m for m in result["messages"]), result["messages"]
    capf = result["capf"]
    assert mine[0]["label"] in capf and "readline" in capf, capf
    assert capf.index("readline") < capf.index(mine[0]["label"]), capf


def run_beside_script(emacs: str, tmp_path: Path, script: str, params: Path,
                      out: Path) -> dict:
    """Runs a client script beside another server, with the editors/emacs folder on the load
    path (the user's setup files); returns what it wrote."""
    done = run_client([emacs, "--batch", "-L", str(USER_CONFIG.parent),
                       "-l", str(SCRIPTS_DIR / script)],
                      timeout=TWO_SERVERS_TIMEOUT_S, cwd=tmp_path,
                      env=server_env(LSP_CODER_TEST_PARAMS=str(params), HOME=str(tmp_path)))
    assert not done.timed_out, done.describe()
    return read_json_result(out, done)


LSP_MODE_CONFIG = REPO_ROOT / "editors" / "emacs" / "lsp-coder-lsp-mode.el"
GET_LSP_MODE = "apt-get install elpa-lsp-mode"


def run_lsp_mode(emacs: str, tmp_path: Path, model: Path, *, ghost: bool) -> dict:
    """Runs lsp_mode_completion.el: lsp-mode with jedi-language-server and lsp-coder's add-on
    client (with `ghost`, its ghost text); returns what the script wrote."""
    jedi = python_program("jedi-language-server")
    probe = run_client([emacs, "--batch", "--eval",
                        "(progn (require 'package) (package-initialize) (require 'lsp-mode))"],
                       timeout=60, env=server_env(HOME=str(tmp_path)))
    if probe.returncode != 0 or probe.timed_out:
        require_or_skip(f"Emacs cannot load lsp-mode; to run this test: {GET_LSP_MODE}")
    params, out = write_read_file_params(tmp_path, [sys.executable, "-m", "lsp_coder"],
                                         model, LSP_MODE_CONFIG,
                                         load_timeout_s=TWO_SERVERS_LOAD_S,
                                         beside=[jedi], ghost=ghost)
    result = run_beside_script(emacs, tmp_path, "lsp_mode_completion.el", params, out)
    assert any(str(model) in m for m in result["messages"]), result["messages"]
    return result


def test_emacs_lsp_mode_add_on_client(emacs: str, tmp_path: Path,
                                      real_small_model: Path) -> None:
    """lsp-coder-lsp-mode.el for the menu: lsp-mode starts lsp-coder as an add-on beside the
    buffer's own server (jedi-language-server here), and `completion-at-point` offers the
    items of both: jedi's names first, then lsp-coder's suggestion."""
    result = run_lsp_mode(emacs, tmp_path, real_small_model, ghost=False)
    assert result["servers"] == ["user-server", "lsp-coder"], result["servers"]
    candidates = result["candidates"]
    mine = [c["label"] for c in candidates if c["server"] == "lsp-coder"]
    theirs = [c["label"] for c in candidates if c["server"] == "other"]
    assert len(mine) == 1 and mine[0].startswith("re"), candidates
    assert {"read", "readline", "readlines"} <= set(theirs), candidates
    labels = [c["label"] for c in candidates]
    assert labels.index("readline") < labels.index(mine[0]), labels
