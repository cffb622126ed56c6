"""OpenAI-compatible ``/v1/completions`` (vLLM, SGLang, llama-cpp-python's server).

The prompt carries the model's own FIM tokens as text (``fim_text``): vLLM rejects ``suffix``
and llama-cpp-python's server has its FIM token ids unset. Streams server-sent events ending in
``data: [DONE]``; with ``stream_options.include_usage`` the last chunk carries ``usage``, and
vLLM puts the prompt tokens its prefix cache served in ``prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import json

from ..config import Config
from ..shared_types import FimQuery
from .fim_text import build, resolve
from .health import Notify
from .remote import Event, RemoteBackend
from .transport import TransportError


class OpenAIBackend(RemoteBackend):
    kind = "openai"
    stream_path = "/v1/completions"
    probe_path = "/v1/models"
    tokenize_path = "/tokenize"

    def __init__(self, config: Config, notify: Notify | None = None) -> None:
        self.template = resolve(config.backend.fim_template, config.model.path)
        super().__init__(config, notify)
        self._tokenize_route: str | None = None

    @staticmethod
    def base_url(url: str) -> str:
        url = url.rstrip("/")
        return url[: -len("/v1")] if url.endswith("/v1") else url

    def prompt(self, query: FimQuery) -> str:
        return build(self.template, self.prompt_parts(query))

    def body(self, query: FimQuery) -> dict:
        body = {
            "prompt": self.prompt(query),
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

    def tokenize_count(self, text: str) -> int:
        """vLLM and SGLang answer ``/tokenize``; llama-cpp-python ``/extras/tokenize/count``."""
        if self._tokenize_route is None:
            for route in ("/tokenize", "/extras/tokenize/count"):
                try:
                    count = self._count_at(route, text)
                except TransportError as exc:
                    if exc.status in (404, 405):
                        continue
                    raise
                self._tokenize_route = route
                return count
            self._tokenize_route = ""
        if not self._tokenize_route:
            raise TransportError("protocol", "no tokenize endpoint")
        return self._count_at(self._tokenize_route, text)

    def _count_at(self, route: str, text: str) -> int:
        if route == "/tokenize":
            body = {"prompt": text, "add_special_tokens": False}
            if self.model:
                body["model"] = self.model
            return int(self.transport.post_json(route, body, timeout_s=5.0)["count"])
        body = {"input": text}
        if self.model:
            body["model"] = self.model
        return int(self.transport.post_json(route, body, timeout_s=5.0)["count"])


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
