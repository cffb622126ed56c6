"""vscode-languageserver-protocol (under VS Code's client) gets lsp-coder's inline completions.

Including while the user types: one request per key, none awaited before the next key.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.clients.conftest import CLIENTS_DIR, npm_ci, run_client
from tests.conftest import server_env

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

NODE_DIR = CLIENTS_DIR / "node"
TIMEOUT_S = 180
TYPED_REQUESTS = 20


def run_inline_script(node: str, python: str, model: Path) -> dict:
    """Runs `node inline.mjs python model` with the `node` program; returns its JSON summary."""
    npm_ci(NODE_DIR)
    done = run_client([node, "inline.mjs", python, str(model)], cwd=NODE_DIR,
                      timeout=TIMEOUT_S, env=server_env())
    assert not done.timed_out, done.describe()
    lines = done.stdout.strip().splitlines()
    assert lines, f"inline.mjs printed nothing: {done.describe()}"
    summary = json.loads(lines[-1])
    if summary.get("error"):
        pytest.fail(f"inline.mjs reported: {summary['error']}\nserver messages:"
                    f" {summary.get('messages')}\n{done.describe()}")
    assert done.returncode == 0, done.describe()
    return summary


def test_node_inline_completion(node: str, real_small_model: Path) -> None:
    """A first suggestion, an answer to each of the 20 typing requests, a last suggestion."""
    summary = run_inline_script(node, sys.executable, real_small_model)
    assert summary["server_inline_provider"] is not None, "no inlineCompletionProvider"

    first = summary["first"]["items"]
    assert summary["first_nonempty"], summary["first"]
    assert first[0]["range"]["start"] == {"line": 1, "character": 4}, first[0]
    assert first[0]["command"]["command"] == "lspCoder.accepted", first[0]

    assert summary["typed_requests"] == TYPED_REQUESTS
    assert summary["typed_answered"] == TYPED_REQUESTS, summary["typed_errors"]
    assert summary["last_nonempty"], summary["last"]
    last = summary["last"]["items"][0]
    # The cursor after typing `    return fibonacci(n -` (4 + 20 characters).
    assert last["range"]["start"] == {"line": 1, "character": 24}, last


def test_node_harness_fails_on_a_broken_server(node: str, tmp_path: Path) -> None:
    """A server whose model is missing must fail the client test, not pass or skip it."""
    with pytest.raises(pytest.fail.Exception, match="the model failed to load"):
        run_inline_script(node, sys.executable, tmp_path / "missing.gguf")
