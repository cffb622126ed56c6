"""What every HTTP backend shares: streaming with stop rules and cancel, health, counts, stats,
and how the prompt goes (``prompt_encoding``: token ids where the engine takes them).

A wire format (``llama_server``, ``openai_compat``, ``ollama``) says how to build the request
body, which path to post it to, how to read one line of the stream into an ``Event``, and how
its tokenize route is asked (``http_tokenizer``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx

from ..config import Config, redact_url
from ..prompt_parts import PromptPart, PromptParts
from ..shared_types import BackendResult, FimQuery, PrefillResult, RequestStats, StopReason
from .engine_tokens import EngineTokens, Tokenizer, VocabTokenizer
from .fim_text import FimText, resolve
from .health import Health, Notify
from .prompt_encoding import PromptEncoding
from .remote_fit import fit_parts
from .token_counts import TokenCounter
from .transport import Cancelled, HttpTransport, TransportError, TransportSettings

log = logging.getLogger(__name__)

MAX_CHARS_PER_TOKEN = 64
"""A suggestion longer than ``max_tokens`` times this is cut there, whatever the engine sends."""


@dataclass(slots=True)
class Event:
    """One parsed piece of a stream."""

    text: str = ""
    done: bool = False
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    generated_tokens: int | None = None
    prompt_ms: float | None = None
    error: str = ""

    @classmethod
    def failed(cls, error: object) -> Event:
        """An engine's error field (an object with a ``message``, or plain text), cut short."""
        message = error.get("message", error) if isinstance(error, dict) else error
        return cls(error=str(message)[:200])


class RemoteBackend:
    """An HTTP backend; subclasses define the wire format."""

    kind = "remote"
    can_prefill = False
    shared = True
    stream_path = ""
    probe_path = ""
    tokenize_path = ""  # empty: the engine has no tokenize endpoint
    takes_ids = False  # whether the completion route may take a list of token ids as prompt

    def __init__(self, config: Config, notify: Notify | None = None) -> None:
        bc = config.backend
        self.config = config
        self.template: FimText = resolve(bc.fim_template, config.model.path)
        base = httpx.URL(self.base_url(bc.url))
        self.url = redact_url(str(base))  # what messages, logs and stats show
        login = (base.username, base.password) if base.username or base.password else None
        self.model = bc.model
        api_key_env = bc.api_key_env

        def bearer() -> str | None:
            return os.environ.get(api_key_env) if api_key_env else None

        self.transport = HttpTransport(TransportSettings(
            base_url=str(base.copy_with(userinfo=b"")), login=login, headers=dict(bc.headers),
            timeout_s=bc.timeout_ms / 1000,
            stream_timeout_s=max(bc.stream_timeout_ms, bc.timeout_ms) / 1000,
            verify=bc.tls_verify, ca_file=bc.ca_file, bearer=bearer))
        self.health = Health(self.url, api_key_env, self.probe, notify)
        controls = self.template.controls()
        vocab = (EngineTokens(VocabTokenizer(config.model.path), controls)
                 if config.model.path else None)
        route = self.http_tokenizer()
        endpoint = EngineTokens(route, controls) if route is not None else None
        self.encoding = PromptEncoding(self.template, vocab or endpoint, self.takes_ids,
                                       bc.prompt)
        """How prompts go: token ids (from the local GGUF's vocabulary, else the engine's
        tokenize route) or a string."""
        self.count_tokens = self._counter(config, vocab, endpoint)
        self._lock = threading.Lock()
        self.totals = {"completions": 0, "stream_requests": 0, "cancelled": 0, "errors": 0,
                       "prompt_tokens": 0, "cached_tokens": 0, "cache_reported": 0,
                       "prefills": 0}

    # -- wire format (subclasses) ---------------------------------------------------------------

    @staticmethod
    def base_url(url: str) -> str:
        return url.rstrip("/")

    def body(self, query: FimQuery, *, as_text: bool = False) -> dict:
        """The request body for ``query`` (``as_text``: the prompt as a string)."""
        raise NotImplementedError

    def parse(self, line: str) -> Event | None:
        raise NotImplementedError

    def http_tokenizer(self) -> Tokenizer | None:
        """The engine's tokenize route as a ``Tokenizer`` (None: it has none)."""
        return None

    def prompt_parts(self, query: FimQuery) -> PromptParts:
        """The one place the prompt is fitted: the pieces gathered for the settings' budgets
        (the engine's context is its own business), held to them by this engine's counts."""
        return fit_parts(query.parts, self.count_tokens, query.budget)

    def prompt(self, query: FimQuery, *, shared: bool = False,
               as_text: bool = False) -> str | list[int]:
        """The prompt for ``query`` as this engine takes it: the fitted pieces
        (``prompt_parts``) as token ids or a string (``PromptEncoding.prompt``, whose
        ``shared`` and ``as_text`` these are)."""
        return self.encoding.prompt(self.prompt_parts(query), shared=shared, as_text=as_text)

    # -- the Backend protocol ---------------------------------------------------------------------

    def complete(self, query: FimQuery) -> BackendResult:
        if not self.health.available():
            return BackendResult("", StopReason.BACKEND_DOWN)
        start = time.perf_counter()
        first_ms: float | None = None
        text, reason = "", StopReason.MAX_TOKENS
        pieces = 0
        max_chars = query.max_tokens * MAX_CHARS_PER_TOKEN
        final = Event()
        with self._lock:
            self.totals["completions"] += 1
            self.totals["stream_requests"] += 1
        try:
            for event in self._stream(query):
                take_usage(final, event)
                if event.text:
                    if pieces >= query.max_tokens:
                        break  # an engine that ignores max_tokens: cut where it should stop
                    pieces += 1
                    if first_ms is None:
                        first_ms = (time.perf_counter() - start) * 1000
                    text += event.text
                    cut = query.stop(text) if query.stop is not None else None
                    if cut is not None:
                        text, reason = text[:cut], StopReason.STOP_RULE
                        break  # closes the response: the engine stops generating
                    if len(text) >= max_chars:
                        text = text[:max_chars]
                        break
                    if query.on_text is not None:
                        query.on_text(text)
                if event.done:
                    reason = StopReason.EOG
                    break
        except Cancelled:
            with self._lock:
                self.totals["cancelled"] += 1
            return BackendResult(text, StopReason.CANCELLED)
        except TransportError as exc:
            with self._lock:
                self.totals["errors"] += 1
            self.encoding.forget()
            self.health.failed(exc)
            return BackendResult("", StopReason.BACKEND_ERROR)
        self.health.succeeded()
        elapsed = (time.perf_counter() - start) * 1000
        return BackendResult(text, reason, self._stats(final, first_ms, elapsed),
                             server_cached_tokens=final.cached_tokens)

    def prefill(self, query: FimQuery, part: PromptPart = "request",
                in_view: bool = False) -> PrefillResult | None:
        return None  # only llama-server has a prefill-only request

    def _stream(self, query: FimQuery) -> Iterator[Event]:
        """The events of the completion of ``query``. A prompt of ids refused before the
        engine ever took one is sent again as a string; if that is taken, prompts go as
        strings from then on (``PromptEncoding.may_refuse``)."""
        try:
            first = True
            for event in self.events(self.body(query), query.cancelled):
                first = False
                yield event
        except TransportError as exc:
            if not (first and self.encoding.may_refuse(exc)):
                raise
            try:
                events = self.events(self.body(query, as_text=True), query.cancelled)
                event = next(events)
            except (TransportError, StopIteration):
                raise exc from None
            self.encoding.use_text(f"the engine refused a prompt of token ids ({exc.detail[:80]})")
            yield event
            yield from events
            return
        if self.encoding.mode == "tokens":
            self.encoding.confirmed = True

    def events(self, body: dict, cancelled: Callable[[], bool]) -> Iterator[Event]:
        """The parsed events of a streamed request; raises TransportError (an error event
        too) or Cancelled."""
        events = 0
        for line in self.transport.stream_lines(self.stream_path, body, cancelled):
            try:
                event = self.parse(line)
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                raise TransportError("protocol", "a stream line that is not the expected JSON"
                                     f" ({type(exc).__name__}): is [backend] kind right?"
                                     ) from None
            if event is None:
                continue
            if event.error:
                raise TransportError("protocol", event.error)
            events += 1
            yield event
        if not events:
            raise TransportError("protocol", "the answer held no completion: is [backend] url"
                                 " the engine's address and [backend] kind right?")

    def probe(self) -> None:
        """One cheap request that succeeds when the engine can serve (raises TransportError)."""
        self.transport.get_json(self.probe_path, timeout_s=5.0)

    def describe(self) -> dict:
        with self._lock:
            totals = dict(self.totals)
        reported = totals["cache_reported"]
        return {
            "kind": self.kind, "url": self.url, "model": self.model or None,
            "health": self.health.snapshot(), "token_counts": self.count_tokens.describe(),
            "prompt": self.encoding.describe(),
            "http_requests": self.transport.requests,
            "server_cached_fraction": (round(totals["cached_tokens"] / reported, 3)
                                       if reported else None),
            **totals,
        }

    def status(self) -> dict:
        return self.describe()

    def memory(self) -> dict:
        return {}

    def ubatches_done(self) -> int:
        return 0

    def forget(self, uri: str) -> None:
        """Nothing is kept per document here: the engine keeps its own cache."""

    def close(self) -> None:
        self.health.close()
        self.transport.close()

    # -- helpers --------------------------------------------------------------------------------

    def _stats(self, final: Event, first_ms: float | None, elapsed_ms: float) -> RequestStats:
        prompt = final.prompt_tokens or 0
        cached = final.cached_tokens
        with self._lock:
            self.totals["prompt_tokens"] += prompt
            if cached is not None:
                self.totals["cached_tokens"] += cached
                self.totals["cache_reported"] += prompt
        prefill_ms = final.prompt_ms if final.prompt_ms is not None else (first_ms or 0.0)
        return RequestStats(prompt_tokens=prompt, reused_tokens=cached or 0,
                            evaluated_tokens=prompt - (cached or 0),
                            generated_tokens=final.generated_tokens or 0,
                            prefill_ms=prefill_ms, decode_ms=max(0.0, elapsed_ms - prefill_ms))

    def _counter(self, config: Config, vocab: EngineTokens | None,
                 endpoint: EngineTokens | None) -> TokenCounter:
        """Token counts by ``backend.token_counts``, sharing the tokens the prompt is built
        from (a text counted is a text tokenized once)."""
        method = config.backend.token_counts
        if method == "auto":
            method = "vocab" if vocab else ("endpoint" if endpoint else "estimate")
        exact = {"vocab": vocab, "endpoint": endpoint}.get(method)
        return TokenCounter(method, exact.count if exact is not None else None)


def take_usage(final: Event, event: Event) -> None:
    for name in ("prompt_tokens", "cached_tokens", "generated_tokens", "prompt_ms"):
        value = getattr(event, name)
        if value is not None:
            setattr(final, name, value)
