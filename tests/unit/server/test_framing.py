"""The frame reader: whole frames, split frames, and recovery after every kind of damage."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_coder.server.framing import Damaged, FrameReader, Message


def frame(value, length_delta: int = 0, headers: str = "") -> bytes:
    body = json.dumps(value).encode()
    return f"{headers}Content-Length: {len(body) + length_delta}\r\n\r\n".encode() + body


def request(rid, method="shutdown") -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": method}


NEXT = request(99)


def read(*chunks: bytes) -> list:
    reader = FrameReader()
    out = []
    for chunk in chunks:
        out += reader.feed(chunk)
    return out


def test_whole_frames_and_a_frame_split_into_single_bytes():
    data = frame(request(1)) + frame(request(2), headers="Content-Type: x\r\n")
    assert read(data) == [Message(request(1)), Message(request(2))]
    assert read(*[data[i : i + 1] for i in range(len(data))]) == [
        Message(request(1)), Message(request(2))]


def test_invalid_json_reports_the_id_and_the_next_frame_is_read():
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": {bad}}'
    bad = b"Content-Length: %d\r\n\r\n" % len(body) + body
    assert read(bad + frame(NEXT)) == [Damaged("invalid JSON", 7), Message(NEXT)]


def test_the_id_of_a_nested_object_is_not_taken_for_the_request_id():
    body = b'{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}, oops}'
    bad = b"Content-Length: %d\r\n\r\n" % len(body) + body
    assert read(bad + frame(NEXT)) == [Damaged("invalid JSON", None), Message(NEXT)]


def test_content_length_too_short():
    out = read(frame(request(5), length_delta=-10) + frame(NEXT))
    assert out[0] == Damaged("invalid JSON", 5)
    assert out[-1] == Message(NEXT)
    assert all(isinstance(m, Damaged) for m in out[:-1])


@pytest.mark.parametrize("delta", [1, 10, 200])
def test_content_length_too_long_is_noticed_when_the_next_header_arrives(delta):
    reader = FrameReader()
    assert reader.feed(frame(request(5), length_delta=delta)) == []
    assert reader.feed(frame(NEXT)) == [
        Damaged("Content-Length longer than the message", 5), Message(NEXT)]


def test_missing_content_length():
    out = read(b"Content-Type: x\r\n\r\n" + json.dumps(request(5)).encode() + frame(NEXT))
    assert out[-1] == Message(NEXT)
    assert all(isinstance(m, Damaged) and m.request_id is None for m in out[:-1])


@pytest.mark.parametrize("value", [b"x", b"-4", b"+58", str(2**62).encode(), b"1e3"])
def test_an_unusable_content_length_answers_the_id_its_body_shows(value):
    body = json.dumps(request(5)).encode()
    out = read(b"Content-Length: " + value + b"\r\n\r\n" + body + frame(NEXT))
    assert out == [Damaged("Content-Length not a valid size", 5), Message(NEXT)]
    reader = FrameReader()  # the last frame: the client waits for an answer
    assert reader.feed(b"Content-Length: " + value + b"\r\n\r\n" + body) == []
    assert reader.stalled() == [Damaged("Content-Length not a valid size", 5)]
    assert reader.feed(frame(NEXT)) == [Message(NEXT)]


def test_garbage_between_frames_is_skipped_and_reported_once():
    out = read(frame(request(1)) + b"hello {\x00\xff garbage\r\n\r\n" + frame(NEXT))
    assert out == [Message(request(1)), Damaged("bytes outside a frame"), Message(NEXT)]


def test_a_bare_json_body_without_headers_does_not_swallow_the_next_frame():
    out = read(json.dumps(request(1)).encode() + frame(NEXT))
    assert out[-1] == Message(NEXT)


def test_non_utf8_body_is_decoded_with_replacement_and_flagged():
    body = b'{"jsonrpc": "2.0", "method": "m", "params": {"t": "\xff\xfe"}}'
    out = read(b"Content-Length: %d\r\n\r\n" % len(body) + body + frame(NEXT))
    assert out[0] == Message({"jsonrpc": "2.0", "method": "m", "params": {"t": "\ufffd\ufffd"}},
                             utf8=False)
    assert out[1] == Message(NEXT)


def test_deep_nesting_is_damage_not_a_crash():
    body = b"[" * 100000
    out = read(b"Content-Length: %d\r\n\r\n" % len(body) + body + frame(NEXT))
    assert out == [Damaged("invalid JSON", None), Message(NEXT)]


def test_a_document_that_contains_a_content_length_header_is_one_message():
    value = {"jsonrpc": "2.0", "method": "m",
             "params": {"text": "Content-Length: 3\r\n\r\n{}" * 3}}
    data = frame(value)
    assert read(*[data[i : i + 7] for i in range(0, len(data), 7)]) == [Message(value)]


def test_a_stalled_body_too_long_is_answered_with_its_id():
    reader = FrameReader()
    assert reader.feed(frame(request(5), length_delta=50)) == []
    assert reader.stalled() == [Damaged("Content-Length longer than the message", 5)]
    assert reader.feed(frame(NEXT)) == [Message(NEXT)]


def test_a_stalled_damaged_body_resynchronises_on_the_header_inside_it():
    reader = FrameReader()
    body = b'{"jsonrpc": "2.0", "id": 4, "method": "x", "params": {"a": "b}}'  # a quote lost
    head = b"Content-Length: %d\r\n\r\n" % (len(body) + 500)
    assert reader.feed(head + body + frame(NEXT)) == []  # NEXT's header is not past the end
    assert reader.stalled() == [Damaged("invalid JSON", 4), Message(NEXT)]


def test_a_slow_client_is_not_cut_off():
    reader = FrameReader()
    data = frame(request(5))
    assert reader.feed(data[:-5]) == []
    assert reader.stalled() == []
    assert reader.feed(data[-5:]) == [Message(request(5))]


def test_a_header_without_its_blank_line_does_not_swallow_the_next_frame():
    out = read(b"Content-Length: 12" + frame(NEXT))
    assert out == [Damaged("Content-Length not a valid size"), Message(NEXT)]


MUTATIONS = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(1, 255)),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.integers(1, 40)),
    st.tuples(st.just("insert"), st.integers(0, 10_000), st.binary(min_size=1, max_size=20)),
    st.tuples(st.just("truncate"), st.integers(0, 10_000), st.none()),
)


def mutate(data: bytes, mutation) -> bytes:
    kind, at, arg = mutation
    at %= len(data)
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ arg]) + data[at + 1 :]
    if kind == "delete":
        return data[:at] + data[at + arg :]
    if kind == "insert":
        return data[:at] + arg + data[at:]
    return data[:at]


@settings(max_examples=1500, deadline=None)
@given(st.lists(MUTATIONS, min_size=1, max_size=3), st.integers(1, 64))
def test_after_any_corruption_the_next_request_is_answered(mutations, chunk):
    data = frame({"jsonrpc": "2.0", "id": 5, "method": "textDocument/completion",
                  "params": {"textDocument": {"uri": "file:///a.py"},
                             "position": {"line": 1, "character": 4}}})
    for mutation in mutations:
        data = mutate(data, mutation) or b"x"
    reader = FrameReader()
    out = []
    for i in range(0, len(data), chunk):
        out += reader.feed(data[i : i + chunk])
    out += reader.feed(frame(NEXT))
    out += reader.stalled()
    answered = [m for m in out if m == Message(NEXT) or (isinstance(m, Damaged)
                                                         and m.request_id == 99)]
    assert len(answered) == 1, out


def test_an_id_with_an_invalid_escape_is_not_guessed():
    body = b'{"jsonrpc": "2.0", "id": "\\q", "method": "x", oops}'
    bad = b"Content-Length: %d\r\n\r\n" % len(body) + body
    assert read(bad + frame(NEXT)) == [Damaged("invalid JSON", None), Message(NEXT)]


def test_every_single_byte_corruption_leaves_the_next_request_answered():
    good = frame({"jsonrpc": "2.0", "id": "r1", "method": "textDocument/inlineCompletion",
                  "params": {"textDocument": {"uri": "file:///a.py"},
                             "position": {"line": 3, "character": 8}}})
    reader = FrameReader()  # one reader through all of them: no state may stick
    for at in range(len(good)):
        for data in (good[:at] + good[at + 1 :], good[:at] + b"\x00" + good[at:],
                     *(good[:at] + bytes([good[at] ^ bit]) + good[at + 1 :]
                       for bit in (1, 2, 4, 8, 16, 32, 64, 128))):
            out = reader.feed(data) + reader.feed(frame(NEXT))
            if Message(NEXT) not in out:
                out += reader.stalled()
            assert Message(NEXT) in out or Damaged("invalid JSON", 99) in out, (data, out)
