"""Engines that misbehave on the wire: each request stays bounded and each fault says so.

A real HTTP server on loopback (pytest-httpserver) plays an engine that streams without end,
sends only keep-alive comments, dribbles one byte at a time, sends one huge line, a malformed
line, an HTML page or a redirect. Every case ends as an empty or cut answer within the
deadlines, with at most one message per outage that names the URL.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator

import pytest
from werkzeug import Request, Response

from lsp_coder.backends.factory import BackendConfigError, remote_backend
from lsp_coder.config import ConfigError
from tests.backends.recorded import openai_stream
from tests.backends.test_faults import Messages
from tests.backends.test_recorded_exchanges import config, query

SSE = "text/event-stream"


def chunk(text: str) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "text": text}]}) + "\n\n"


@pytest.fixture
def released() -> Iterator[threading.Event]:
    """Set at the end of a test: every endless handler stops (the server can then shut down)."""
    event = threading.Event()
    yield event
    event.set()


def streaming(pieces: Iterator[bytes], content_type: str = SSE):
    def handler(request: Request) -> Response:
        return Response(pieces, content_type=content_type, direct_passthrough=True)
    return handler


def endless(released: threading.Event, piece: str | bytes, every_s: float,
            first: str = "") -> Iterator[bytes]:
    """``first``, then ``piece`` every ``every_s`` until the test ends (or the client leaves)."""
    piece = piece.encode() if isinstance(piece, str) else piece
    if first:
        yield first.encode()
    while not released.wait(every_s):
        yield piece


def backend_for(httpserver, messages: Messages | None = None, **settings):
    return remote_backend(config(kind="openai", url=httpserver.url_for("/"),
                                 token_counts="estimate", **settings), notify=messages)


def complete_timed(backend, **kw) -> tuple:
    start = time.monotonic()
    try:
        result = backend.complete(query(**kw))
    finally:
        elapsed = time.monotonic() - start
        backend.close()
    return result, elapsed


def test_an_endless_stream_is_cut_at_max_tokens(httpserver, released):
    httpserver.expect_request("/v1/completions").respond_with_handler(
        streaming(endless(released, chunk("ab "), 0.001)))
    result, elapsed = complete_timed(backend_for(httpserver), max_tokens=20)
    assert result.text == "ab " * 20
    assert elapsed < 10


@pytest.mark.parametrize("what", ["keep-alive comments", "one byte a second", "slow tokens"])
def test_a_stream_that_never_finishes_ends_at_a_deadline_with_one_message(httpserver, released,
                                                                           what):
    stream = {
        "keep-alive comments": endless(released, ": ping\n\n", 0.2),
        "one byte a second": endless(released, b"x", 0.3, first="data: "),
        "slow tokens": endless(released, chunk("a"), 0.2),
    }[what]
    httpserver.expect_request("/v1/completions").respond_with_handler(streaming(stream))
    messages = Messages()
    backend = backend_for(httpserver, messages, timeout_ms=1000, stream_timeout_ms=2500)
    result, elapsed = complete_timed(backend, max_tokens=1000)
    assert result.stop_reason == "backend_error" and result.text == ""
    assert elapsed < 5, elapsed
    (level, text), = messages.items
    assert "did not answer in time" in text and httpserver.url_for("/").rstrip("/") in text
    if what == "slow tokens":
        assert "stream_timeout_ms" in text
    else:
        assert "timeout_ms" in text


def test_a_huge_line_is_not_read_whole(httpserver):
    huge = "data: " + json.dumps({"choices": [{"text": "x" * (10 * 2**20)}]}) + "\n\n"
    httpserver.expect_request("/v1/completions").respond_with_data(huge, content_type=SSE)
    messages = Messages()
    result, _ = complete_timed(backend_for(httpserver, messages))
    assert result.text == "" and result.stop_reason == "backend_error"
    (level, text), = messages.items
    assert "KiB" in text


def test_a_long_answer_is_cut_to_the_length_max_tokens_allows(httpserver):
    body = chunk("y" * 100_000) + "data: [DONE]\n\n"
    httpserver.expect_request("/v1/completions").respond_with_data(body, content_type=SSE)
    result, _ = complete_timed(backend_for(httpserver), max_tokens=8)
    assert 0 < len(result.text) <= 8 * 64


@pytest.mark.parametrize("body,content_type,words", [
    ("data: {bad\n\n", SSE, "not the expected JSON"),
    ("data: [1, 2]\n\n", SSE, "not the expected JSON"),
    ("<html><body>Welcome to nginx!</body></html>", "text/html", "text/html"),
    ("hello\n", "text/plain", "held no completion"),
])
def test_a_malformed_answer_is_one_message_and_no_traceback(httpserver, caplog, body,
                                                            content_type, words):
    httpserver.expect_request("/v1/completions").respond_with_data(body,
                                                                   content_type=content_type)
    caplog.set_level(logging.DEBUG)
    messages = Messages()
    backend = backend_for(httpserver, messages)
    try:
        results = [backend.complete(query()) for _ in range(3)]
    finally:
        backend.close()
    assert [r.stop_reason for r in results] == ["backend_error"] + ["backend_down"] * 2
    (level, text), = messages.items
    assert words in text and httpserver.url_for("/").rstrip("/") in text
    assert "Traceback" not in caplog.text


def test_a_redirect_to_another_address_is_reported(httpserver):
    elsewhere = "http://127.0.0.1:1/v1/completions"
    httpserver.expect_request("/v1/completions").respond_with_data(
        "", status=302, headers={"Location": elsewhere})
    messages = Messages()
    result, _ = complete_timed(backend_for(httpserver, messages))
    assert result.stop_reason == "backend_error"
    (level, text), = messages.items
    assert elsewhere in text and "[backend] url" in text


def test_a_redirect_on_the_same_address_is_followed_once(httpserver):
    httpserver.expect_request("/v1/completions").respond_with_data(
        "", status=307, headers={"Location": "/engine/v1/completions"})
    httpserver.expect_request("/engine/v1/completions").respond_with_data(
        openai_stream("m", ["ok"], prompt_tokens=3, cached_tokens=None), content_type=SSE)
    result, _ = complete_timed(backend_for(httpserver))
    assert result.text == "ok"


@pytest.mark.parametrize("url,words", [
    ("http://127.0.0.1:99999", "port"),
    ("http://[::1", "brackets"),
    ("ftp://127.0.0.1:8080", "http://"),
    ("http://:8080", "host"),
])
def test_a_bad_url_is_refused_when_the_config_is_read(url, words):
    with pytest.raises(ConfigError) as caught:
        config(kind="openai", url=url)
    assert "[backend] url" in str(caught.value) and words in str(caught.value)
    assert caught.value.usable is not None and caught.value.usable.backend.url == ""
    with pytest.raises(BackendConfigError, match="needs url"):
        remote_backend(caught.value.usable)


def test_credentials_in_the_url_are_used_but_never_shown(httpserver, caplog):
    seen: list[str | None] = []

    def refuse(request: Request) -> Response:
        seen.append(request.headers.get("Authorization"))
        return Response("{}", status=500, content_type="application/json")

    httpserver.expect_request("/v1/completions").respond_with_handler(refuse)
    caplog.set_level(logging.DEBUG)
    messages = Messages()
    url = httpserver.url_for("/").replace("http://", "http://alice:pw-s3cr3t@")
    backend = remote_backend(config(kind="openai", url=url, token_counts="estimate"),
                             notify=messages)
    try:
        assert backend.complete(query()).stop_reason == "backend_error"
        described = json.dumps(backend.describe())
    finally:
        backend.close()
    assert seen and seen[0] and seen[0].startswith("Basic ")  # httpx sent them
    (level, text), = messages.items
    assert "***@" in text
    for shown in (text, described, caplog.text):
        assert "pw-s3cr3t" not in shown and "alice" not in shown
