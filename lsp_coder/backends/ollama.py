"""Ollama's ``/api/generate`` with ``raw: true`` (our FIM prompt, no chat template).

Streams newline-delimited JSON; the last object (``done: true``) has ``prompt_eval_count`` (the
prompt tokens it evaluated: Ollama does not report what its cache served) and ``eval_count``.
Ollama has no tokenize endpoint: counts come from a local GGUF or the estimate. Its prompt is a
string only: control-token text in user content is broken (``prompt_encoding``).
"""

from __future__ import annotations

import json

from ..shared_types import FimQuery
from .remote import Event, RemoteBackend


class OllamaBackend(RemoteBackend):
    kind = "ollama"
    stream_path = "/api/generate"
    probe_path = "/api/version"

    def body(self, query: FimQuery, *, as_text: bool = False) -> dict:
        return {
            "model": self.model,
            "prompt": self.prompt(query),
            "raw": True,
            "stream": True,
            "options": {"num_predict": query.max_tokens, "temperature": query.temperature,
                        "seed": query.seed},
        }

    def parse(self, line: str) -> Event | None:
        return parse_ndjson(line)


def parse_ndjson(line: str) -> Event | None:
    """One line of Ollama's generate stream."""
    if not line.strip():
        return None
    data = json.loads(line)
    if "error" in data:
        return Event(error=str(data["error"])[:200])
    event = Event(text=data.get("response", ""), done=bool(data.get("done")))
    if event.done:
        event.prompt_tokens = data.get("prompt_eval_count")
        event.generated_tokens = data.get("eval_count")
        if data.get("prompt_eval_duration") is not None:
            event.prompt_ms = data["prompt_eval_duration"] / 1e6
    return event
