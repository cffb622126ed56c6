"""Typing inside a very long line (a data line, minified code) costs what typing in a normal
line costs: each key reads only what was typed, not the whole window of the line again."""

from __future__ import annotations

import random

from tests.robustness.conftest import tiny_options

LINE_CHARS = 1_000_000


def test_each_key_in_a_long_line_reads_only_what_was_typed(fresh, tiny_qwen):
    srv = fresh()
    srv.initialize(tiny_options(tiny_qwen))
    assert srv.wait_for_model()["model_loaded"]
    # Digits: one token each, so the window of the line is more tokens than the budget holds.
    digits = random.Random(7).choices("0123456789", k=LINE_CHARS)
    text = "x = " + "".join(digits) + "\n"
    uri = "file:///tmp/long_line.py"
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}})
    column = 4 + LINE_CHARS // 2
    entries = []
    for version, key in enumerate(["", "+", "("], start=1):
        if key:
            srv.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": 0, "character": column},
                                              "end": {"line": 0, "character": column}},
                                    "text": key}]})
            column += 1
        answer = srv.call("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": 0, "character": column},
            "context": {"triggerKind": 1}})
        assert "result" in answer, answer
        entries.append(srv.call("workspace/executeCommand",
                                {"command": "lspCoder.stats"})["result"]["recent"][-1])
    first, *keys = entries
    assert first["prompt_tokens"] > 200, first  # the window of the line filled the budget
    for entry in keys:
        assert entry.get("prompt_tokens"), entry  # the engine ran (no cached answer)
        assert entry["evaluated_tokens"] <= 8, entries
