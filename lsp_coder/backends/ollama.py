"""Ollama's ``/api/generate`` with ``raw: true`` (our FIM prompt, no chat template).

Streams newline-delimited JSON; the last object (``done: true``) has ``prompt_eval_count`` (the
prompt tokens it evaluated: Ollama does not report what its cache served) and ``eval_count``.
Ollama has no tokenize endpoint: counts come from a local GGUF or the estimate.
"""

from __future__ import annotations

import json

from ..config import Config
from ..shared_types import FimQuery
from .fim_text import build, resolve
from .health import Notify
from .remote import Event, RemoteBackend


class OllamaBackend(RemoteBackend):
    kind = "ollama"
    stream_path = "/api/generate"
    probe_path = "/api/version"

    def __init__(self, config: Config, notify: Notify | None = None) -> None:
        self.template = resolve(config.backend.fim_template, config.model.path)
        super().__init__(config, notify)

    def body(self, query: FimQuery) -> dict:
        return {
            "model": self.model,
            "prompt": build(self.template, self.prompt_parts(query)),
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
