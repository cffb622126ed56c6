"""Emacs 28 shows lsp-coder's suggestion as ghost text (an overlay), beside
jedi-language-server: eglot 1.9 through rassumfrassum (lsp-coder.el's `lsp-coder-eglot-beside`
with its rass preset), and lsp-mode 8.0 with lsp-coder's add-on client. Keys are typed through
the command loop (`execute-kbd-macro`), so the keymap that is active only while a suggestion
shows, and the user's own TAB when none does, are what a user gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clients.conftest import (
    init_options,
)
from tests.clients.test_emacs import (
    TWO_SERVERS_LOAD_S,
    USER_CONFIG,
    lsp_coder_program,
    python_program,
    run_beside_script,
    run_lsp_mode,
)

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

FILES = {
    "add": ("add.py", "def add(a, b):\n    "),
    "subtract": ("subtract.py", "def subtract(a, b):\n    "),
    "greet": ("greet.py", "import random\n\n\ndef pick_greeting(names):\n    "),
    "read_file": ("read_file.py", "def read_file(path):\n    with open(path) as f:\n"
                                  "        return f.re"),
}


def next_word(text: str) -> str:
    """What accept word (M-f) takes: blanks, then a run of word or of other characters."""
    stripped = text.lstrip(" \t\n")
    blanks = text[: len(text) - len(stripped)]
    run = ""
    for ch in stripped:
        if run and (ch.isalnum() or ch == "_") != (run[0].isalnum() or run[0] == "_"):
            break
        if ch in " \t\n":
            break
        run += ch
    return blanks + run


def test_emacs_eglot_ghost_text_beside_another_server(emacs: str, tmp_path: Path,
                                                      real_small_model: Path) -> None:
    rass, jedi = python_program("rass"), python_program("jedi-language-server")
    ours = lsp_coder_program(tmp_path)
    files = {}
    for key, (name, text) in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        files[key] = str(tmp_path / name)
    options = init_options(real_small_model)
    options["completion"].update(inline_budget_ms=30_000, alternatives=3)
    out = tmp_path / "result.json"
    params = tmp_path / "params.json"
    params.write_text(json.dumps({
        "cmd": [str(ours)], "init_options": options, "user_config": str(USER_CONFIG),
        "beside": [jedi], "rass": rass, "files": files, "load_timeout_s": TWO_SERVERS_LOAD_S,
        "ghost_timeout_s": 60, "out": str(out)}), encoding="utf-8")
    r = run_beside_script(emacs, tmp_path, "eglot_ghost.el", params, out)
    assert r["ghost_mode"] is True and r["inline_provider"] is True, r
    assert any(str(real_small_model) in m for m in r["messages"]), r["messages"]

    # Shown after point, in its face, the cursor before it; typing along keeps the rest, a
    # character it does not have takes it away at once.
    ghost = r["ghost"]
    assert ghost.strip(), ghost
    assert r["face"] == "lsp-coder-ghost-face" and r["cursor_before"] is True, r
    assert r["typed_along"] == ghost[1:], (ghost, r["typed_along"])
    assert r["typed_other"] is None and r["overlays_after_other"] == 0, r

    # C-g dismissed it and TAB was the user's; after the undo TAB accepted it whole.
    assert r["after_dismiss"] is None, r
    assert r["user_tab"] == FILES["add"][1] + "[user-tab]", r["user_tab"]
    assert r["before_tab"] == FILES["add"][1], r["before_tab"]
    assert r["after_tab"] == FILES["add"][1] + r["tab_ghost"], (r["after_tab"], r["tab_ghost"])
    assert r["accepted"] == 1, r["accepted"]

    # Another buffer took it away.
    assert r["switched_to"] == "add.py" and r["overlays_left"] == 0, r

    # M-f took a word and the rest stayed shown; C-e took the rest of the line.
    part = r["part_ghost"]
    word = next_word(part)
    assert r["after_word"] == r["part_before"] + word, (part, r["after_word"])
    rest = part[len(word):]
    if rest:
        assert r["rest_after_word"] == rest, (part, r["rest_after_word"])
        line = rest.split("\n")[0] if not rest.startswith("\n") else \
            "\n" + rest[1:].split("\n")[0]
        assert r["after_line"] == r["after_word"] + line, (rest, r["after_line"])

    # M-n showed another suggestion, M-p the first again.
    assert r["cycle_second"] != r["cycle_first"], r
    assert r["cycle_back"] == r["cycle_first"], r

    # The completion list holds jedi's names and no second copy of the suggestion.
    labels = {item["label"] for item in r["completion"]}
    assert {"read", "readline"} <= labels, r["completion"]
    assert not [i for i in r["completion"] if i["detail"] == "lsp-coder"], r["completion"]


def test_emacs_lsp_mode_ghost_text(emacs: str, tmp_path: Path, real_small_model: Path) -> None:
    """lsp-coder-lsp-mode.el with ghost text: lsp-mode asks lsp-coder (its add-on client,
    beside jedi-language-server) for textDocument/inlineCompletion; the suggestion shows as an
    overlay and TAB inserts it."""
    result = run_lsp_mode(emacs, tmp_path, real_small_model, ghost=True)
    ghost = result["ghost"]
    assert result["ghost_mode"] is True and ghost, result
    at = result["point"]
    assert result["after"] == result["before"][:at] + ghost + result["before"][at:], result
