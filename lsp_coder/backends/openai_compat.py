"""OpenAI-compatible ``/v1/completions`` (vLLM, SGLang, llama-cpp-python's server).

The prompt carries the model's own FIM tokens (vLLM rejects ``suffix`` and llama-cpp-python's
server has its FIM token ids unset): as token ids where the engine takes them (vLLM, SGLang:
``prompt_encoding``, the text tokenized by their ``/tokenize`` cut at each control text, or by
``model.path``'s vocabulary), else as text with control-token text in user content broken
(llama-cpp-python's server refuses ids; it is found at the first request). Streams server-sent
events ending in ``data: [DONE]``; with ``stream_options.include_usage`` the last chunk carries
``usage``, and vLLM puts the prompt tokens its prefix cache served in
``prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import json

from ..shared_types import FimQuery
from .engine_tokens import Tokenizer
from .remote import Event, RemoteBackend
from .transport import TransportError


class OpenAIBackend(RemoteBackend):
    kind = "openai"
    stream_path = "/v1/completions"
    probe_path = "/v1/models"
    tokenize_path = "/tokenize"
    takes_ids = True

    @staticmethod
    def base_url(url: str) -> str:
        url = url.rstrip("/")
        return url[: -len("/v1")] if url.endswith("/v1") else url

    def body(self, query: FimQuery, *, as_text: bool = False) -> dict:
        body = {
            "prompt": self.prompt(query, as_text=as_text),
            "max_tokens": query.max_tokens,
            "temperature": query.temperature,
            "seed": query.seed,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.model:
            body["model"] = self.model
        return body

    def parse(self, line: str) -> Event | None:
        return parse_sse(line)

    def http_tokenizer(self) -> Tokenizer:
        return OpenAITokenizer(self)


class OpenAITokenizer:
    """vLLM's and SGLang's ``/tokenize``, or llama-cpp-python's ``/extras/tokenize`` (found at
    the first request); both parse control-token text, so text is cut at it first."""

    parses_control = True
    ROUTES = ("/tokenize", "/extras/tokenize")

    def __init__(self, backend: OpenAIBackend) -> None:
        self._backend = backend
        self._route: str | None = None

    def text(self, text: str) -> list[int]:
        return self._ids(text, begin=False)

    def control(self, text: str) -> list[int]:
        return self._ids(text, begin=False)

    def begin(self) -> list[int]:
        return self._ids("", begin=True)

    def _ids(self, text: str, begin: bool) -> list[int]:
        if self._route is None:
            for route in self.ROUTES:
                try:
                    ids = self._ask(route, text, begin)
                except TransportError as exc:
                    if exc.status in (404, 405):
                        continue
                    raise
                self._route = route
                return ids
            self._route = ""
        if not self._route:
            raise TransportError("protocol", "no tokenize endpoint", 404)
        return self._ask(self._route, text, begin)

    def _ask(self, route: str, text: str, begin: bool) -> list[int]:
        model = {"model": self._backend.model} if self._backend.model else {}
        if route == "/tokenize":
            body = {"prompt": text, "add_special_tokens": begin, **model}
        else:  # llama-cpp-python: its BOS comes with every text (the prompt never goes as ids)
            body = {"input": text, **model}
        answer = self._backend.transport.post_json(route, body, timeout_s=5.0)
        return [int(t) for t in answer["tokens"]]


def parse_sse(line: str) -> Event | None:
    """One line of an OpenAI-style completion stream."""
    if not line.startswith("data:"):
        return None
    payload = line[5:].strip()
    if payload == "[DONE]":
        return Event(done=True)
    data = json.loads(payload)
    if "error" in data:
        return Event.failed(data["error"])
    event = Event()
    choices = data.get("choices") or []
    if choices:
        event.text = choices[0].get("text") or ""
    usage = data.get("usage")
    if usage:
        event.prompt_tokens = int(usage.get("prompt_tokens") or 0)
        event.generated_tokens = int(usage.get("completion_tokens") or 0)
        details = usage.get("prompt_tokens_details") or {}
        if details.get("cached_tokens") is not None:
            event.cached_tokens = int(details["cached_tokens"])
    return event
