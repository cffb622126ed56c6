"""llama.cpp's llama-server: its native ``/completion`` with our FIM prompt, streamed.

Not ``/infill``: that endpoint appends the typed line to the prefix, before the suffix, so every
keystroke makes the engine evaluate the whole suffix block again (about 140 tokens, 2 s on a
2-core CPU with a 0.5B model). Our prompt puts the typed line after the middle token
(``fim_text.build``), so a keystroke only appends to what the slot has cached. The prompt goes
as token ids (``prompt_encoding``): the text tokenized by ``/tokenize`` with
``parse_special: false`` (or by ``model.path``'s vocabulary), the FIM tokens of
``backend.fim_template`` (``auto``: read from ``model.path``, else Qwen's) by id, so the
engine never reads a control token the user's text spelled out. ``cache_prompt`` keeps the
slot's KV for the next keystroke, ``t_max_predict_ms`` and ``n_indent`` let the engine stop
early. The events carry ``timings.cache_n`` (prompt tokens served from the slot's cache) and
``timings.prompt_n`` (prompt tokens evaluated).
"""

from __future__ import annotations

import json
import time

from ..prompt_parts import PromptPart
from ..shared_types import FimQuery, PrefillResult
from .engine_tokens import HttpTokenizer, Tokenizer
from .remote import Event, RemoteBackend, take_usage
from .transport import Cancelled, TransportError


class LlamaServerBackend(RemoteBackend):
    kind = "llama-server"
    can_prefill = True
    stream_path = "/completion"
    probe_path = "/health"
    tokenize_path = "/tokenize"
    takes_ids = True

    def body(self, query: FimQuery, *, as_text: bool = False, shared: bool = False) -> dict:
        body = {
            "prompt": self.prompt(query, shared=shared, as_text=as_text),
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

    def http_tokenizer(self) -> Tokenizer:
        """``/tokenize``: ``parse_special: false`` reads text as text, exactly."""

        def post(body: dict) -> object:
            return self.transport.post_json(self.tokenize_path, body, timeout_s=5.0)

        return HttpTokenizer(
            post, lambda text, control, begin: {"content": text, "parse_special": control,
                                                 "add_special": begin},
            lambda answer: [int(t) for t in answer["tokens"]], parses_control=False)

    def prefill(self, query: FimQuery, part: PromptPart = "request",
                in_view: bool = False) -> PrefillResult | None:
        """Evaluate the prompt into a slot's cache: ``n_predict: 0``.

        Streamed, so ``query.cancelled`` closes the request (the engine drops the task).
        The ``shared`` part sends no text after the cursor. The engine's own slots decide
        what stays cached, so ``in_view`` changes nothing here.
        """
        if not self.health.available():
            return None
        start = time.perf_counter()
        final = Event()
        outcome = "done"
        try:
            # "shared": up to the suffix marker, what every cursor in the window shares
            body = self.body(query, shared=part == "shared")
            body["n_predict"] = 0
            body.pop("t_max_predict_ms", None)
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
