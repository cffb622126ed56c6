"""vLLM, SGLang and Ollama request and stream shapes, from recorded exchanges in their formats.

These engines cannot run here (no GPU, no Ollama build); pytest-httpserver replays streams
written in their documented formats and records what we sent.
"""

from __future__ import annotations

import json

import pytest
from werkzeug import Request, Response

from lsp_coder.backends.factory import remote_backend
from lsp_coder.config import Config, apply
from lsp_coder.prompt_parts import PromptParts
from lsp_coder.shared_types import FimQuery
from tests.backends.recorded import (
    VLLM_SUFFIX_ERROR,
    ollama_stream,
    openai_stream,
)
from tests.backends.standin import StandIn, Vocabulary


def config(**backend) -> Config:
    return apply(Config(), {"backend": backend}, "test")


def query(extra=(("util.py", "X = 1\n"),), **kw) -> FimQuery:
    parts = PromptParts(extra, "def add(a, b):\n", "    ret", "\n\nprint(add(1, 2))\n")
    return FimQuery(**{"uri": "file:///a.py", "sources": parts, "max_tokens": 32, **kw})


class Recorder:
    """A handler that answers with ``body`` and keeps the JSON bodies it was sent."""

    def __init__(self, body: str, content_type: str, status: int = 200) -> None:
        self.body, self.content_type, self.status = body, content_type, status
        self.seen: list[dict] = []

    def __call__(self, request: Request) -> Response:
        self.seen.append(json.loads(request.data or b"{}"))
        return Response(self.body, status=self.status, content_type=self.content_type)


def test_vllm_completions_carry_the_fim_prompt_and_report_cached_tokens(httpserver):
    stream = Recorder(openai_stream("Qwen/Qwen2.5-Coder-1.5B", ["urn", " a", " + b"],
                                    prompt_tokens=48, cached_tokens=32), "text/event-stream")
    httpserver.expect_request("/v1/completions", method="POST").respond_with_handler(stream)
    backend = remote_backend(config(kind="openai", url=httpserver.url_for("/v1"),
                                    model="Qwen/Qwen2.5-Coder-1.5B", fim_template="qwen",
                                    token_counts="estimate"))
    try:
        seen_text: list[str] = []
        result = backend.complete(query(on_text=seen_text.append))
    finally:
        backend.close()
    assert result.text == "urn a + b"
    assert seen_text == ["urn", "urn a", "urn a + b"]  # streamed piece by piece
    (body,) = stream.seen
    assert body["prompt"] == ("<|file_sep|>util.py\nX = 1\n<|fim_prefix|>def add(a, b):\n    "
                              "<|fim_suffix|>\n\nprint(add(1, 2))\n<|fim_middle|>ret")
    assert "suffix" not in body  # vLLM rejects it: see VLLM_SUFFIX_ERROR
    assert body["model"] == "Qwen/Qwen2.5-Coder-1.5B"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert result.server_cached_tokens == 32
    assert result.stats.prompt_tokens == 48 and result.stats.reused_tokens == 32
    assert backend.describe()["server_cached_fraction"] == pytest.approx(32 / 48, abs=1e-3)


def test_sglang_stream_without_cache_report_leaves_the_fraction_unknown(httpserver):
    stream = Recorder(openai_stream("default", ["x = 1"], prompt_tokens=20, cached_tokens=None,
                                    id_prefix="sglang"), "text/event-stream")
    httpserver.expect_request("/v1/completions", method="POST").respond_with_handler(stream)
    backend = remote_backend(config(kind="openai", url=httpserver.url_for("/"),
                                    fim_template="deepseek", token_counts="estimate"))
    try:
        result = backend.complete(query(extra=()))
    finally:
        backend.close()
    assert result.text == "x = 1"
    assert result.server_cached_tokens is None
    assert backend.describe()["server_cached_fraction"] is None
    assert stream.seen[0]["prompt"].startswith("<｜fim▁begin｜>def add")
    assert "model" not in stream.seen[0]  # the engine serves one model


def test_vllm_tokenize_counts_each_distinct_text_once(real_small_model):
    """Counts come from the tokens the prompt is built from: one ``/tokenize`` per distinct
    text (after one for the vocabulary's lead), read as text (control-token text cut)."""
    vocabulary = Vocabulary(real_small_model)
    engine = StandIn(vocabulary, "vllm")
    backend = remote_backend(config(kind="openai", url=engine.url, model="m",
                                    token_counts="endpoint"))
    try:
        for text in ("def f():\n", "def f():\n", "x = 2\n"):
            assert backend.count_tokens(text) == len(vocabulary.tokens(text)) > 1
        assert backend.count_tokens("<|endoftext|>") == 1 + len(
            vocabulary.tokens("|endoftext|>"))  # cut after "<": never the control token
    finally:
        backend.close()
        engine.close()
    bodies = [b for b in engine.tokenized]
    assert [b["prompt"] for b in bodies] == ["\n", "def f():\n", "x = 2\n", "<", "|endoftext|>"]
    assert all(b["model"] == "m" and b["add_special_tokens"] is False for b in bodies)


def test_a_stop_rule_ends_the_stream_early(httpserver):
    stream = Recorder(openai_stream("m", ["urn a", " + b\n", "\nprint(", "1)\n"],
                                    prompt_tokens=10, cached_tokens=0), "text/event-stream")
    httpserver.expect_request("/v1/completions", method="POST").respond_with_handler(stream)
    backend = remote_backend(config(kind="openai", url=httpserver.url_for("/")))
    try:
        result = backend.complete(query(stop=lambda text: text.find("\n") if "\n" in text
                                        else None))
    finally:
        backend.close()
    assert result.text == "urn a + b"
    assert result.stop_reason == "stop"


def test_vllm_error_body_is_one_message_not_a_crash(httpserver):
    error = Recorder(json.dumps(VLLM_SUFFIX_ERROR), "application/json", status=400)
    httpserver.expect_request("/v1/completions", method="POST").respond_with_handler(error)
    messages: list[tuple[str, str]] = []
    backend = remote_backend(config(kind="openai", url=httpserver.url_for("/")),
                             notify=lambda level, text: messages.append((level, text)))
    try:
        first = backend.complete(query())
        second = backend.complete(query())
    finally:
        backend.close()
    assert (first.text, first.stop_reason) == ("", "backend_error")
    assert second.stop_reason == "backend_down"  # not sent again until a probe succeeds
    assert len(error.seen) == 1
    assert len(messages) == 1
    assert "HTTP 400" in messages[0][1] and httpserver.url_for("/").rstrip("/") in messages[0][1]


def test_ollama_generate_is_raw_and_streams_ndjson(httpserver):
    stream = Recorder(ollama_stream("qwen2.5-coder:1.5b-base", ["urn", " a + b"],
                                    prompt_eval_count=41), "application/x-ndjson")
    httpserver.expect_request("/api/generate", method="POST").respond_with_handler(stream)
    backend = remote_backend(config(kind="ollama", url=httpserver.url_for("/"),
                                    model="qwen2.5-coder:1.5b-base", fim_template="qwen"))
    try:
        result = backend.complete(query(extra=(), max_tokens=24, temperature=0.0, seed=3))
    finally:
        backend.close()
    assert result.text == "urn a + b"
    (body,) = stream.seen
    assert body["raw"] is True and body["stream"] is True
    assert body["model"] == "qwen2.5-coder:1.5b-base"
    assert body["options"] == {"num_predict": 24, "temperature": 0.0, "seed": 3}
    assert body["prompt"].startswith("<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>")
    assert result.stats.prompt_tokens == 41
    assert result.server_cached_tokens is None  # Ollama does not say
    assert result.stats.prefill_ms == pytest.approx(120.0)


def test_ollama_needs_a_model_name():
    with pytest.raises(ValueError, match="model"):
        remote_backend(config(kind="ollama", url="http://127.0.0.1:11434"))


def test_explicit_template_strings_are_used_as_given(httpserver):
    stream = Recorder(openai_stream("m", ["1"], prompt_tokens=5, cached_tokens=0),
                      "text/event-stream")
    httpserver.expect_request("/v1/completions", method="POST").respond_with_handler(stream)
    backend = remote_backend(config(kind="openai", url=httpserver.url_for("/"),
                                    fim_template={"prefix": "<P>", "suffix": "<S>",
                                                  "middle": "<M>"}))
    try:
        backend.complete(query(extra=()))
    finally:
        backend.close()
    assert stream.seen[0]["prompt"] == ("<P>def add(a, b):\n    <S>\n\nprint(add(1, 2))\n<M>"
                                        "ret")
