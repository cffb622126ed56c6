"""Bad input over real stdio: each request gets exactly one answer with the right code, no popup,
and the server still answers afterwards. One server (tiny model) serves the whole module."""

from __future__ import annotations

import copy
import json
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.robustness.rawclient import MISSING, RawServer, frame

URI = "file:///tmp/robust_bad.py"
TEXT = "def add(a, b):\n    return a + b\n\nx = add("
POSITION = {"line": 3, "character": 8}
INLINE = {"textDocument": {"uri": URI}, "position": POSITION,
          "context": {"triggerKind": 2}}
COMPLETION = {"textDocument": {"uri": URI}, "position": POSITION}
PARAMS = {"textDocument/inlineCompletion": INLINE, "textDocument/completion": COMPLETION,
          "textDocument/documentHighlight": COMPLETION}


@pytest.fixture(scope="module")
def srv(server: RawServer) -> RawServer:
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": TEXT}})
    return server


def with_value(params: dict, path: str, value) -> dict:
    """``params`` with the field at a dotted ``path`` set to ``value`` (MISSING: removed)."""
    out = copy.deepcopy(params)
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[key]
    if value is MISSING:
        node.pop(last, None)
    else:
        node[last] = value
    return out


def assert_one_answer(srv: RawServer, rid, code: int | None) -> dict:
    """Exactly one response to ``rid``: a result (``code`` None) or an error with ``code``."""
    answer = srv.response(rid, timeout=60)
    srv.ping()  # every message before the ping has been handled...
    assert srv.count(rid) == 1, srv.responses[rid]  # ...and answered once
    if code is None:
        assert "result" in answer, answer
    else:
        assert answer.get("error", {}).get("code") == code, answer
    return answer


def assert_quiet(srv: RawServer, popups_before: int) -> None:
    assert srv.popups()[popups_before:] == []
    assert not any("Traceback" in line for line in srv.stderr), "".join(srv.stderr)


INVALID_PARAMS = [
    ("position", "0:4"),
    ("position.line", "three"),
    ("position.line", -1),
    ("position.character", -1),
    ("position.line", 2**31),
    ("position.character", 2**40),
    ("position.character", 0.5),
    ("position.line", 1.5),
    ("position.line", "3"),
    ("position.character", True),
    ("position", MISSING),
    ("textDocument", MISSING),
    ("textDocument", "file:///x.py"),
]


@pytest.mark.parametrize("method", sorted(PARAMS))
@pytest.mark.parametrize("path,value", INVALID_PARAMS)
def test_invalid_params_get_32602(srv, method, path, value):
    before = len(srv.popups())
    rid = srv.request(method, with_value(PARAMS[method], path, value))
    assert_one_answer(srv, rid, -32602)
    assert_quiet(srv, before)


@pytest.mark.parametrize("method", sorted(PARAMS))
@pytest.mark.parametrize("params", [None, [], [1, 2], "x", MISSING])
def test_params_that_are_not_an_object_get_32602(srv, method, params):
    rid = srv.request(method, params)
    assert_one_answer(srv, rid, -32602)


def test_inline_completion_without_context_gets_32602(srv):
    rid = srv.request("textDocument/inlineCompletion", with_value(INLINE, "context", MISSING))
    assert_one_answer(srv, rid, -32602)


@pytest.mark.parametrize("method", sorted(PARAMS))
def test_a_position_past_the_end_is_clamped_and_answered(srv, method):
    params = with_value(PARAMS[method], "position", {"line": 10**6, "character": 10**6})
    assert_one_answer(srv, srv.request(method, params), None)


@pytest.mark.parametrize("message,code", [
    ({"jsonrpc": "2.0", "id": "u1", "method": "no/suchMethod"}, -32601),
    ({"jsonrpc": "1.0", "id": "u2", "method": "shutdown"}, -32600),
    ({"jsonrpc": "2.0", "id": "u3", "method": 5}, -32600),
    ({"jsonrpc": "2.0", "id": "u4", "method": "initialize",
      "params": {"processId": None, "rootUri": None, "capabilities": {}}}, -32600),
    ({"jsonrpc": "2.0", "id": "u5", "method": "initialized", "params": {}}, -32600),
    ({"jsonrpc": "2.0", "id": "u6", "method": "workspace/executeCommand",
      "params": {"command": "no.suchCommand"}}, -32602),
    ({"jsonrpc": "2.0", "id": "u7", "method": "exit"}, -32600),  # a notification: not acted on
])
def test_invalid_requests_with_an_id(srv, message, code):
    srv.send(message)
    assert_one_answer(srv, message["id"], code)


@pytest.mark.parametrize("message", [
    [], [{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}], 5, "x", None,
    {"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"},
    {"jsonrpc": "2.0", "id": True, "method": "shutdown"},
    {"jsonrpc": "2.0", "id": None, "method": "shutdown"},
    {"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"},
])
def test_messages_whose_id_cannot_be_known_get_one_null_id_error(srv, message):
    before = srv.count(None)
    srv.send(message)
    srv.ping()
    assert srv.count(None) == before + 1
    assert srv.responses[None][-1]["error"]["code"] == -32600


def test_invalid_json_with_a_readable_id_gets_32700(srv):
    body = b'{"jsonrpc": "2.0", "id": "j1", "method": "shutdown", "params": {oops}'
    srv.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert_one_answer(srv, "j1", -32700)


def test_a_request_with_non_utf8_bytes_gets_32700(srv):
    body = (b'{"jsonrpc": "2.0", "id": "j2", "method": "textDocument/completion", "params": '
            b'{"textDocument": {"uri": "file:///\xff\xfe.py"}, "position": {"line": 0, '
            b'"character": 0}}}')
    srv.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert_one_answer(srv, "j2", -32700)


def test_a_document_opened_with_non_utf8_bytes_is_kept_and_completed(srv):
    uri = "file:///tmp/latin1.py"
    body = (b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": '
            b'{"uri": "%s", "languageId": "python", "version": 1, "text": "caf\xe9 = 1\\n"}}}'
            % uri.encode())
    before = len(srv.popups())
    srv.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    doc = srv.call("workspace/executeCommand",
                   {"command": "lspCoder.document", "arguments": [uri]})["result"]
    assert doc["units"] == "caf\ufffd = 1\n"
    params = {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 0}}
    assert_one_answer(srv, srv.request("textDocument/completion", params), None)
    assert_quiet(srv, before)


def test_cancelled_request_gets_32800(srv):
    request = {"jsonrpc": "2.0", "id": "c1", "method": "textDocument/inlineCompletion",
               "params": INLINE}
    cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "c1"}}
    srv.send_bytes(frame(request) + frame(cancel))  # one write: cancelled before it runs
    assert_one_answer(srv, "c1", -32800)


@pytest.mark.parametrize("method,params", [
    ("textDocument/didChange", {"textDocument": {"uri": "file:///never-opened.py", "version": 2},
                                "contentChanges": [{"text": "x"}]}),
    ("textDocument/didClose", {"textDocument": {"uri": "file:///never-opened.py"}}),
    ("$/cancelRequest", {"id": {"an": "object"}}),
    ("$/cancelRequest", {"id": 123456}),
    ("textDocument/didOpen", {"textDocument": {"uri": 5}}),
    ("textDocument/didOpen", None),
    ("no/suchNotification", {}),
    ("workspace/didChangeConfiguration", {"settings": [1, 2]}),
])
def test_bad_notifications_are_dropped_quietly(srv, method, params):
    before = len(srv.popups())
    srv.notify(method, params)
    # A notification's async handler runs as a task, after a request read in the same chunk is
    # answered; a second ping is read only after the first answer, so the task has run by then.
    srv.ping()
    srv.ping()
    popups = srv.popups()[before:]
    if method == "workspace/didChangeConfiguration":  # a settings mistake is the user's to fix
        assert len(popups) == 1 and "expected a table" in popups[0]
    else:
        assert popups == []


# -- framing --------------------------------------------------------------------------------------

def _request_frame(rid: str) -> bytes:
    return frame({"jsonrpc": "2.0", "id": rid, "method": "workspace/executeCommand",
                  "params": {"command": "lspCoder.health"}})


def _too_short(f: bytes) -> bytes:
    length = int(f[16 : f.index(b"\r")])
    return b"Content-Length: %d" % (length - 5) + f[f.index(b"\r"):]


@pytest.mark.parametrize("damage,expected", [
    (lambda f: f.replace(b"Content-Length: ", b"Content-Length: 9", 1), -32700),  # too long
    (_too_short, -32700),
    (lambda f: b"Content-Type: x" + f[f.index(b"\r"):], None),  # missing
    (lambda f: b"Content-Length: ten" + f[f.index(b"\r"):], -32700),  # not a number
    (lambda f: f.replace(b"Content-Length: ", b"Content-Length: +", 1), -32700),
    (lambda f: b"Content-Length: %d" % 2**62 + f[f.index(b"\r"):], -32700),
    (lambda f: b"\x00\xff garbage {]\r\n\r\n" + f, "result"),  # garbage, then a good frame
])
def test_framing_recovers(srv, damage, expected):
    rid = f"f{time.monotonic_ns()}"
    before = len(srv.popups())
    srv.send_bytes(damage(_request_frame(rid)))
    srv.ping(timeout=30)  # the next request is answered
    if expected is None:
        assert srv.count(rid) == 0
    elif expected == "result":
        assert srv.count(rid) == 1 and "result" in srv.responses[rid][0]
    else:
        assert srv.count(rid) == 1 and srv.responses[rid][0]["error"]["code"] == expected
    assert_quiet(srv, before)


def test_a_long_method_name_is_cut_in_the_log_and_the_answer(srv):
    method = "m" * 10_000
    answer = assert_one_answer(srv, srv.request(method, {}), -32601)
    assert len(answer["error"]["message"]) < 300
    srv.notify("n" * 10_000, {})
    srv.ping()
    assert not any("m" * 200 in line or "n" * 200 in line for line in srv.stderr)


def test_a_frame_split_across_writes(srv):
    data = _request_frame("split")
    for i in range(0, len(data), 7):
        srv.send_bytes(data[i : i + 7])
        time.sleep(0.01)
    assert_one_answer(srv, "split", None)


# -- generated input ------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8)

FIELDS = {
    "textDocument/inlineCompletion": ["textDocument", "textDocument.uri", "position",
                                      "position.line", "position.character", "context",
                                      "context.triggerKind", "context.selectedCompletionInfo"],
    "textDocument/completion": ["textDocument", "textDocument.uri", "position", "position.line",
                                "position.character", "context"],
    "textDocument/documentHighlight": ["textDocument", "textDocument.uri", "position",
                                       "position.line", "position.character"],
}
REQUESTS = [(method, path) for method, paths in FIELDS.items() for path in paths]
SLOW = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@SLOW
@given(st.sampled_from(REQUESTS), JSON)
def test_random_values_in_request_params(srv, target, value):
    method, path = target
    rid = srv.request(method, with_value(PARAMS[method], path, value))
    answer = srv.response(rid, timeout=60)
    assert "result" in answer or answer["error"]["code"] == -32602, answer
    srv.ping()
    assert srv.count(rid) == 1


NOTIFICATIONS = {
    "textDocument/didChange": ({"textDocument": {"uri": URI, "version": 2},
                                "contentChanges": [{"range": {
                                    "start": {"line": 0, "character": 0},
                                    "end": {"line": 0, "character": 0}}, "text": ""}]},
                               ["textDocument", "textDocument.version", "contentChanges"]),
    "textDocument/didOpen": ({"textDocument": {"uri": "file:///tmp/gen.py", "languageId": "py",
                                               "version": 1, "text": "x = 1\n"}},
                             ["textDocument", "textDocument.text", "textDocument.version"]),
    "textDocument/didClose": ({"textDocument": {"uri": "file:///tmp/gen.py"}},
                              ["textDocument", "textDocument.uri"]),
    "$/cancelRequest": ({"id": 1}, ["id"]),
}


@SLOW
@given(st.sampled_from([(m, p) for m, (_, paths) in NOTIFICATIONS.items() for p in paths]), JSON)
@example(("textDocument/didOpen", "textDocument.version"), float("inf"))  # found at random once
@example(("textDocument/didChange", "textDocument.version"), "3")
def test_random_values_in_notification_params(srv, target, value):
    method, path = target
    before = len(srv.popups())
    srv.notify(method, with_value(NOTIFICATIONS[method][0], path, value))
    srv.ping()
    assert_quiet(srv, before)


@SLOW
@given(st.integers(0, 10_000), st.integers(0, 255), st.sampled_from(["flip", "drop", "insert"]))
def test_random_byte_corruption_of_a_frame(srv, at, byte, how):
    rid = f"r{time.monotonic_ns()}"
    data = frame({"jsonrpc": "2.0", "id": rid, "method": "textDocument/inlineCompletion",
                  "params": INLINE})
    at %= len(data)
    if how == "flip":
        data = data[:at] + bytes([data[at] ^ (byte or 1)]) + data[at + 1 :]
    elif how == "drop":
        data = data[:at] + data[at + 1 :]
    else:
        data = data[:at] + bytes([byte]) + data[at:]
    srv.send_bytes(data)
    srv.ping(timeout=30)
    assert srv.count(rid) <= 1
    for answers in srv.responses.values():
        assert len(answers) == 1 or answers[0].get("id") is None, answers


def test_privacy_no_document_text_in_the_log(srv):
    secret = "zq_secret_identifier_6174"
    uri = "file:///tmp/private.py"
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": f"{secret} = 1\n"}})
    body = json.dumps({"jsonrpc": "2.0", "id": "p1", "method": "textDocument/completion",
                       "params": {"textDocument": {"uri": uri},
                                  "position": {"line": "x", "character": secret}}}).encode()
    srv.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    srv.send_bytes(b"Content-Length: 40\r\n\r\n{\"text\": \"" + secret.encode() + b"\"")
    srv.notify("textDocument/didChange", {"textDocument": {"uri": "file:///nope", "version": 1},
                                          "contentChanges": [{"text": secret}]})
    srv.ping(timeout=30)
    assert_one_answer(srv, srv.request("textDocument/completion", {
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 0}}), None)
    assert not any(secret in line for line in srv.stderr)


def test_privacy_verbose_log_keeps_document_text_out(fresh, tiny_qwen):
    """``-v`` raises our own log level, not pygls's: it would log every message's text."""
    from tests.robustness.conftest import tiny_options

    secret = "zq_verbose_secret_5821"
    srv = fresh("-v")
    assert "result" in srv.initialize(tiny_options(tiny_qwen))
    assert srv.wait_for_model()["model_loaded"]
    uri = "file:///tmp/private_verbose.py"
    srv.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": f"{secret} = 1\n"}})
    answer = srv.call("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 0},
        "context": {"triggerKind": 2}})
    assert "result" in answer, answer
    srv.ping()
    log = "".join(srv.stderr)
    assert secret not in log
    assert "jsonrpc" not in log  # no message payload, so no suggestion text either
