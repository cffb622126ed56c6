"""What the forwarder tells a new shared server is the editor's session as it is now."""

from __future__ import annotations

from lsp_coder.shared.editor_session import EditorSession, is_own_answer


def _request(rid, method, params=None):
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}


def _notify(method, params=None):
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


def _follow(session, message):
    session.follow(message, message["method"], "id" in message)


def test_replay_carries_the_settings_as_changed_and_the_documents_as_edited():
    session = EditorSession()
    _follow(session, _request(1, "initialize", {
        "processId": 4242, "initializationOptions": {"completion": {"max_tokens": 16}}}))
    session.answered({"jsonrpc": "2.0", "id": 1,
                      "result": {"capabilities": {"positionEncoding": "utf-8"}}})
    _follow(session, _notify("initialized"))
    _follow(session, _notify("workspace/didChangeConfiguration",
                             {"settings": {"completion": {"debounce_ms": 5}}}))
    _follow(session, _notify("textDocument/didOpen", {"textDocument": {
        "uri": "file:///a.py", "languageId": "python", "version": 1, "text": "é = 1\n"}}))
    _follow(session, _notify("textDocument/didChange", {
        "textDocument": {"uri": "file:///a.py", "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 5},
                                      "end": {"line": 0, "character": 6}},
                            "text": "2"}]}))

    assert session.editor_pid() == 4242
    first, initialized, opened = session.replay()
    assert is_own_answer(first["id"]) and first["method"] == "initialize"
    assert first["params"]["processId"] == 4242
    assert first["params"]["initializationOptions"] == {
        "completion": {"max_tokens": 16, "debounce_ms": 5}}
    assert initialized["method"] == "initialized"
    # utf-8 positions: "é" is two units, so character 5 is the "1".
    assert opened["params"]["textDocument"] == {
        "uri": "file:///a.py", "languageId": "python", "version": 2, "text": "é = 2\n"}
    assert session.replay()[0]["id"] != first["id"]


def test_requests_wait_until_answered_and_shutdown_is_remembered():
    session = EditorSession()
    _follow(session, _request(1, "initialize"))
    _follow(session, _request(2, "textDocument/inlineCompletion"))
    _follow(session, _request(3, "shutdown"))
    assert session.pending == {1: "initialize", 2: "textDocument/inlineCompletion",
                               3: "shutdown"}
    session.answered({"jsonrpc": "2.0", "id": 2, "result": None})
    assert not session.shut_down and 2 not in session.pending
    session.answered({"jsonrpc": "2.0", "id": 3, "result": None})
    assert session.shut_down and session.pending == {1: "initialize"}


def test_documents_before_initialize_are_not_followed_and_no_pid_is_none():
    session = EditorSession()
    _follow(session, _notify("textDocument/didOpen", {"textDocument": {
        "uri": "file:///a.py", "languageId": "python", "version": 1, "text": "x"}}))
    assert session.editor_pid() is None and not session.documents.open
    _follow(session, _request(1, "initialize", {"processId": "not a pid"}))
    assert session.editor_pid() is None
    assert len(session.replay()) == 1  # no ``initialized`` yet, no documents
