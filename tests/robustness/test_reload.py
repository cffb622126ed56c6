"""Model and config changes are transactional; a bad draft costs only the draft; requests
during a load wait for the model."""

from __future__ import annotations

import os

import pytest

from tests.conftest import server_env
from tests.robustness.conftest import tiny_options
from tests.robustness.rawclient import RawServer, frame

URI = "file:///tmp/reload.py"
TEXT = "def add(a, b):\n    return "


def open_and_complete(srv: RawServer) -> dict:
    """Complete at the end of a small document; returns the stats entry of that request."""
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": TEXT}})
    answer = srv.call("textDocument/inlineCompletion", {
        "textDocument": {"uri": URI}, "position": {"line": 1, "character": 11},
        "context": {"triggerKind": 1}})
    assert "result" in answer, answer
    srv.notify("textDocument/didClose", {"textDocument": {"uri": URI}})
    return srv.call("workspace/executeCommand",
                    {"command": "lspCoder.stats"})["result"]["recent"][-1]


@pytest.fixture
def truncated(tmp_path, tiny_qwen):
    path = tmp_path / "truncated.gguf"
    path.write_bytes(tiny_qwen.read_bytes()[:4096])
    return path


@pytest.fixture
def loaded(fresh, tiny_qwen):
    srv = fresh()
    srv.initialize(tiny_options(tiny_qwen))
    assert srv.wait_for_model()["model_loaded"]
    return srv


@pytest.mark.parametrize("bad", ["missing", "truncated", "directory"])
def test_a_bad_model_after_a_good_one_keeps_the_old_engine(loaded, truncated, tmp_path, bad):
    srv = loaded
    path = {"missing": str(tmp_path / "missing.gguf"), "truncated": str(truncated),
            "directory": str(tmp_path)}[bad]
    before = len(srv.popups())
    srv.notify("workspace/didChangeConfiguration", {"settings": {"model": {"path": path}}})
    assert srv.wait_for(lambda: len(srv.popups()) > before, 60)
    popups = srv.popups()[before:]
    assert len(popups) == 1 and path in popups[0] and "still serving" in popups[0], popups
    assert "config" in popups[0]  # says where to fix it
    totals = srv.call("workspace/executeCommand", {"command": "lspCoder.stats"})["result"]
    assert totals["totals"]["model_loaded"]
    assert open_and_complete(srv).get("prompt_tokens", 0) > 0  # the old engine still serves


@pytest.mark.parametrize("bad", ["directory", "/dev/null", "/dev/zero", "fifo"])
def test_a_model_path_that_is_not_a_regular_file_says_what_it_is(loaded, tmp_path, bad):
    srv = loaded
    path = {"directory": str(tmp_path), "fifo": str(tmp_path / "model.fifo")}.get(bad, bad)
    if bad == "fifo":
        os.mkfifo(path)  # opening it would block until a writer comes: it must not be opened
    before = len(srv.popups())
    srv.notify("workspace/didChangeConfiguration", {"settings": {"model": {"path": path}}})
    assert srv.wait_for(lambda: len(srv.popups()) > before, 60)
    (popup,) = srv.popups()[before:]
    assert path in popup and "still serving" in popup and "not found" not in popup, popup
    assert {"directory": "a directory", "fifo": "a pipe"}.get(bad, "a device") in popup
    assert open_and_complete(srv).get("prompt_tokens", 0) > 0


def test_a_good_reload_replaces_the_engine(loaded, tiny_qwen_other_seed):
    srv = loaded
    before = len(srv.popups())
    srv.notify("workspace/didChangeConfiguration",
               {"settings": {"model": {"path": str(tiny_qwen_other_seed)}}})
    assert srv.wait_for(lambda: any(
        "loaded" in n["params"].get("message", "") and str(tiny_qwen_other_seed)
        in n["params"]["message"] for n in srv.notifications
        if n.get("method") == "window/logMessage"), 60)
    assert srv.popups()[before:] == []
    assert open_and_complete(srv).get("prompt_tokens", 0) > 0


@pytest.mark.parametrize("draft", ["missing", "truncated", "incompatible"])
def test_a_bad_draft_model_means_no_draft_not_no_model(fresh, tiny_qwen, truncated,
                                                        tiny_qwen_padded, draft):
    path = {"missing": "/nonexistent/draft.gguf", "truncated": str(truncated),
            "incompatible": str(tiny_qwen_padded)}[draft]
    srv = fresh()
    options = tiny_options(tiny_qwen)
    options["model"]["draft_path"] = path
    options["speculative"] = {"draft_model": True}  # read it, though it cannot pay here
    srv.initialize(options)
    totals = srv.wait_for_model()
    assert totals["model_loaded"] and not totals["error"], totals
    popups = srv.popups()
    assert len(popups) == 1 and "draft" in popups[0] and "no model" not in popups[0], popups
    assert open_and_complete(srv).get("prompt_tokens", 0) > 0


def test_a_second_initialize_is_refused_and_the_model_kept(loaded, tmp_path):
    srv = loaded
    answer = srv.call("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                     "initializationOptions": {
                                         "model": {"path": str(tmp_path / "x.gguf")}}})
    assert answer["error"]["code"] == -32600
    assert open_and_complete(srv).get("prompt_tokens", 0) > 0


def test_requests_during_the_load_wait_for_the_model(tiny_qwen):
    srv = RawServer(server_env())
    try:
        srv.call("initialize", {"processId": None, "rootUri": None,
                                "capabilities": {"window": {"workDoneProgress": True}},
                                "initializationOptions": tiny_options(tiny_qwen)})
        opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": TEXT}}}
        ask = {"jsonrpc": "2.0", "id": "early", "method": "textDocument/inlineCompletion",
               "params": {"textDocument": {"uri": URI},
                          "position": {"line": 1, "character": 11},
                          "context": {"triggerKind": 1}}}
        srv.send_bytes(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                       + frame(opened) + frame(ask))
        assert "result" in srv.response("early")
        recent = srv.call("workspace/executeCommand",
                          {"command": "lspCoder.stats"})["result"]["recent"]
        assert recent[0].get("prompt_tokens", 0) > 0, recent  # answered by the model
        progress = [n["params"]["value"] for n in srv.notifications
                    if n.get("method") == "$/progress"]
        assert progress[0]["kind"] == "begin" and "loading" in progress[0]["message"]
    finally:
        srv.close()


def test_requests_during_a_failed_load_are_answered_empty():
    srv = RawServer(server_env())
    try:
        srv.call("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                "initializationOptions": {"model": {"path": "/nope.gguf"}}})
        ask = {"jsonrpc": "2.0", "id": "early", "method": "textDocument/completion",
               "params": {"textDocument": {"uri": URI}, "position": {"line": 1, "character": 1}}}
        opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": TEXT}}}
        srv.send_bytes(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                       + frame(opened) + frame(ask))
        assert srv.response("early")["result"]["items"] == []
        assert len(srv.popups()) == 1 and "/nope.gguf" in srv.popups()[0]
    finally:
        srv.close()
