"""Faults on the wire: 401, 429, 5xx, refused, bad TLS. One message each, recovery by itself."""

from __future__ import annotations

import json
import logging
import ssl
import subprocess
import sys
import threading
import time

import pytest
import trustme
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from lsp_coder.backends.factory import remote_backend
from tests.backends.conftest import free_port
from tests.backends.recorded import openai_stream
from tests.backends.test_recorded_exchanges import config, query

TOKEN = "s3cr3t-t0ken-value"


class Switch:
    """Answers with the current ``status`` (and ``headers``); 200 is a good stream."""

    def __init__(self, status: int, headers: dict | None = None) -> None:
        self.status, self.headers = status, headers or {}
        self.auth: list[str | None] = []
        self.completions = 0

    def completions_handler(self, request: Request) -> Response:
        self.auth.append(request.headers.get("Authorization"))
        self.completions += 1
        if self.status != 200:
            return Response(json.dumps({"error": {"message": "nope"}}), status=self.status,
                            headers=self.headers, content_type="application/json")
        return Response(openai_stream("m", ["ok"], prompt_tokens=3, cached_tokens=1),
                        content_type="text/event-stream")

    def models_handler(self, request: Request) -> Response:
        self.auth.append(request.headers.get("Authorization"))
        if self.status != 200:
            return Response("{}", status=self.status, headers=self.headers)
        return Response(json.dumps({"object": "list", "data": [{"id": "m"}]}),
                        content_type="application/json")


class Messages:
    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def __call__(self, level: str, text: str) -> None:
        self.items.append((level, text))


def serve(httpserver, switch: Switch) -> None:
    httpserver.expect_request("/v1/completions").respond_with_handler(switch.completions_handler)
    httpserver.expect_request("/v1/models").respond_with_handler(switch.models_handler)


@pytest.mark.parametrize("status,words", [(401, "API_TOKEN_FOR_TEST"), (500, "HTTP 500"),
                                          (429, "busy")])
def test_one_message_then_recovery_without_a_request_per_keystroke(httpserver, monkeypatch,
                                                                    caplog, status, words):
    monkeypatch.setenv("API_TOKEN_FOR_TEST", TOKEN)
    switch = Switch(status, {"Retry-After": "0"} if status == 429 else None)
    serve(httpserver, switch)
    messages = Messages()
    caplog.set_level(logging.DEBUG)
    backend = remote_backend(config(kind="openai", url=httpserver.url_for("/"),
                                    api_key_env="API_TOKEN_FOR_TEST"), notify=messages)
    try:
        results = [backend.complete(query()) for _ in range(5)]  # five keystrokes
        assert [r.text for r in results] == [""] * 5
        assert switch.completions == 1  # the other four were answered without asking
        assert len(messages.items) == 1
        level, text = messages.items[0]
        assert words in text and httpserver.url_for("/").rstrip("/") in text
        switch.status = 200
        assert backend.health.wait_up(10), "the background retry did not bring it back"
        assert backend.complete(query()).text == "ok"
    finally:
        backend.close()
    assert len(messages.items) == 2 and "answers again" in messages.items[1][1]
    assert all(a == f"Bearer {TOKEN}" for a in switch.auth)
    assert TOKEN not in caplog.text and all(TOKEN not in t for _, t in messages.items)


def test_refused_names_the_url_and_what_to_do():
    port = free_port()  # nothing listens there
    messages = Messages()
    backend = remote_backend(config(kind="llama-server", url=f"http://127.0.0.1:{port}",
                                    token_counts="estimate"), notify=messages)
    try:
        result = backend.complete(query())
    finally:
        backend.close()
    assert result.stop_reason == "backend_error"
    (level, text), = messages.items
    assert level == "error"
    assert f"http://127.0.0.1:{port}" in text and "start it" in text


@pytest.fixture(scope="module")
def tls_ca():
    return trustme.CA()


@pytest.fixture
def tls_httpserver(tls_ca):
    """An HTTPS server whose certificate a CA we do not trust by default signed."""
    ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls_ca.issue_cert("localhost", "127.0.0.1").configure_cert(ssl_context)
    server = HTTPServer(ssl_context=ssl_context)
    server.no_handler_status_code = 404  # no /tokenize: the prompt goes as text
    server.start()
    yield server
    server.clear()
    server.stop()


def test_bad_tls_says_to_set_the_ca_file_and_the_ca_file_fixes_it(tls_httpserver, tls_ca,
                                                                     tmp_path):
    switch = Switch(200)
    serve(tls_httpserver, switch)
    url = tls_httpserver.url_for("/")
    assert url.startswith("https://")
    messages = Messages()
    backend = remote_backend(config(kind="openai", url=url), notify=messages)
    try:
        assert backend.complete(query()).stop_reason == "backend_error"
    finally:
        backend.close()
    (level, text), = messages.items
    assert "TLS" in text and "ca_file" in text
    ca_file = tmp_path / "ca.pem"
    tls_ca.cert_pem.write_to_path(str(ca_file))
    backend = remote_backend(config(kind="openai", url=url, ca_file=str(ca_file)))
    try:
        assert backend.complete(query()).text == "ok"
    finally:
        backend.close()


def test_a_slow_engine_answers_empty_within_the_timeout(httpserver):
    release = threading.Event()

    def stalled(request: Request) -> Response:
        release.wait(10)  # an engine that does not answer until the test ends
        return Response("{}", content_type="application/json")

    httpserver.expect_request("/v1/completions").respond_with_handler(stalled)
    messages = Messages()
    backend = remote_backend(config(kind="openai", url=httpserver.url_for("/"), timeout_ms=400),
                             notify=messages)
    try:
        start = time.monotonic()
        result = backend.complete(query())
        elapsed = time.monotonic() - start
    finally:
        release.set()
        backend.close()
    assert result.text == "" and result.stop_reason == "backend_error"
    assert elapsed < 2.0
    (level, text), = messages.items
    assert "did not answer in time" in text and "timeout_ms" in text


def test_doctor_names_the_url_when_the_engine_is_down(tmp_path):
    from tests.conftest import server_env

    url = f"http://127.0.0.1:{free_port()}"
    config_file = tmp_path / "config.toml"
    config_file.write_text(f'[backend]\nkind = "openai"\nurl = "{url}"\n')
    done = subprocess.run([sys.executable, "-m", "lsp_coder", "--config", str(config_file),
                           "doctor"], capture_output=True, text=True, timeout=120,
                          env=server_env())
    assert done.returncode == 1
    assert f"reachable   no: lsp-coder: the completion engine at {url}" in done.stdout
