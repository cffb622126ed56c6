"""llama.cpp's llama-server: its native ``/completion`` with our FIM prompt, streamed.

Not ``/infill``: that endpoint appends the typed line to the prefix, before the suffix, so every
keystroke makes the engine evaluate the whole suffix block again (about 140 tokens, 2 s on a
2-core CPU with a 0.5B model). Our prompt puts the typed line after the middle token
(``fim_text.build``), so a keystroke only appends to what the slot has cached. The FIM tokens
come from ``backend.fim_template`` (``auto``: read from ``model.path``, else Qwen's) and the
server parses them as special tokens. ``cache_prompt`` keeps the slot's KV for the next
keystroke, ``t_max_predict_ms`` and ``n_indent`` let the engine stop early. The events carry
``timings.cache_n`` (prompt tokens served from the slot's cache) and ``timings.prompt_n``
(prompt tokens evaluated).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

from ..config import Config
from ..shared_types import FimQuery, PrefillResult, PromptPart
from .fim_text import build, resolve
from .health import Notify
from .remote import Event, RemoteBackend, take_usage
from .transport import Cancelled, TransportError


class LlamaServerBackend(RemoteBackend):
    kind = "llama-server"
    can_prefill = True
    stream_path = "/completion"
    probe_path = "/health"
    tokenize_path = "/tokenize"

    def __init__(self, config: Config, notify: Notify | None = None) -> None:
        self.template = resolve(config.backend.fim_template, config.model.path)
        super().__init__(config, notify)

    def prompt(self, query: FimQuery) -> str:
        return build(self.template, self.prompt_parts(query))

    def body(self, query: FimQuery, *, prompt: str | None = None) -> dict:
        body = {
            "prompt": self.prompt(query) if prompt is None else prompt,
            "n_predict": query.max_tokens,
            "temperature": query.temperature,
            "seed": query.seed,
            "cache_prompt": True,
            "stream": True,
            "timings_per_token": True,  # cache figures even when a stop rule ends it early
            "n_indent": _indent(query.parts.line_prefix),
        }
        if query.temperature <= 0:
            body["samplers"] = ["top_k"]
            body["top_k"] = 1
        if query.budget_ms:
            body["t_max_predict_ms"] = int(query.budget_ms)
        if self.model:
            body["model"] = self.model
        return body

    def parse(self, line: str) -> Event | None:
        return parse_sse(line)

    def tokenize_count(self, text: str) -> int:
        answer = self.transport.post_json(self.tokenize_path, {"content": text}, timeout_s=5.0)
        return len(answer["tokens"])

    def prefill(self, query: FimQuery, part: PromptPart = "request",
                in_view: bool = False) -> PrefillResult | None:
        """Evaluate the prompt into a slot's cache: ``n_predict: 0``.

        Streamed, so ``query.cancelled`` closes the request (the engine drops the task).
        The ``shared`` part sends no text after the cursor. The engine's own slots decide
        what stays cached, so ``in_view`` changes nothing here.
        """
        if not self.health.available():
            return None
        prompt = None
        if part == "shared":  # up to the suffix marker: what every cursor in the window shares
            markers = self.template.suffix + self.template.middle
            shared = replace(self.prompt_parts(query), line_prefix="", suffix="", recent="")
            prompt = build(self.template, shared)[: -len(markers)]
        body = self.body(query, prompt=prompt)
        body["n_predict"] = 0
        body.pop("t_max_predict_ms", None)
        start = time.perf_counter()
        final = Event()
        outcome = "done"
        try:
            for event in self.events(body, query.cancelled):
                take_usage(final, event)
                if event.done:
                    break
        except Cancelled:
            outcome = "cancelled"
        except TransportError as exc:
            self.health.failed(exc)
            return None
        with self._lock:
            self.totals["prefills"] += 1
        prompt = final.prompt_tokens or 0
        cached = final.cached_tokens or 0
        return PrefillResult(outcome, prompt, cached, max(0, prompt - cached),
                             (time.perf_counter() - start) * 1000)


def parse_sse(line: str) -> Event | None:
    """One line of llama-server's native stream (``data: {...}``)."""
    if not line.startswith("data:"):
        if line.startswith("error:"):
            return Event(error=line[6:].strip()[:200])
        return None
    data = json.loads(line[5:])
    if "error" in data:
        return Event.failed(data["error"])
    event = Event(text=data.get("content", ""), done=bool(data.get("stop")))
    timings = data.get("timings")
    if timings:
        cached = int(timings.get("cache_n", 0))
        event.cached_tokens = cached
        event.prompt_tokens = cached + int(timings.get("prompt_n", 0))
        event.generated_tokens = int(timings.get("predicted_n", 0))
        event.prompt_ms = float(timings.get("prompt_ms", 0.0))
    return event


def _indent(line_prefix: str) -> int:
    """The cursor line's indentation when only whitespace is typed on it (else 0: no limit)."""
    if line_prefix.strip():
        return 0
    return len(line_prefix)
