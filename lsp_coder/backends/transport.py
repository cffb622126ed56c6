"""HTTP to a serving engine: one pooled keep-alive client, streams that close at once on cancel.

The client is an ``httpx.AsyncClient`` running on its own event loop thread. The caller (the
inference worker thread) consumes a stream line by line and polls its cancel check while it
waits; a cancel, a stop rule or a superseding request cancels the reading task, which closes
the response (the engine sees the disconnect and frees its slot) without waiting for the next
byte from the engine.

Every stream is bounded, whatever the engine does: ``timeout_s`` until its first line that
carries something and between two such lines (blank lines and SSE comments such as ``: ping``
do not count), ``stream_timeout_s`` for the whole stream, and ``max_stream_bytes`` read. A
redirect is followed once when it stays on the same scheme, host and port, else reported; an
answer that is not a stream (an HTML page) is reported.
"""

from __future__ import annotations

import asyncio
import queue
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx

from ..config import redact_url

_POLL_S = 0.01
"""How often a waiting stream looks at its cancel check and deadlines."""

MAX_STREAM_BYTES = 1 << 20
"""What one completion's stream may send in all (a few KiB is usual)."""

STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/json",
                "application/jsonl", "application/x-jsonlines", "text/plain", "")
"""Content types a completion stream may come as."""


class TransportError(Exception):
    """A request failed; ``kind`` says how (for the message shown to the user)."""

    def __init__(self, kind: str, detail: str, status: int = 0,
                 retry_after_s: float | None = None) -> None:
        super().__init__(detail)
        self.kind = kind  # refused | timeout | tls | http | auth | busy | protocol
        self.detail = detail
        self.status = status
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class TransportSettings:
    base_url: str
    headers: dict[str, str]
    timeout_s: float
    """Until a stream's first line that carries something, and between two such lines."""
    stream_timeout_s: float = 20.0
    """The whole of one stream."""
    max_stream_bytes: int = MAX_STREAM_BYTES
    verify: bool = True
    ca_file: str = ""
    login: tuple[str, str] | None = None
    """User and password for HTTP Basic auth (from the URL, which is sent and logged without
    them)."""
    bearer: Callable[[], str | None] = lambda: None
    """Returns the token at each request (read from the environment, never stored)."""


class Cancelled(Exception):
    """The caller's cancel check turned true while a stream was open."""


class HttpTransport:
    """A pooled client on a private event loop thread; methods are called from any one thread."""

    def __init__(self, settings: TransportSettings) -> None:
        self.settings = settings
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="lsp-coder-http")
        self._thread.start()
        self._client = self._call(self._make_client(), None)

    async def _make_client(self) -> httpx.AsyncClient:
        s = self.settings
        verify: bool | ssl.SSLContext = s.verify
        if s.verify and s.ca_file:
            verify = ssl.create_default_context(cafile=s.ca_file)
        return httpx.AsyncClient(
            base_url=s.base_url, headers=s.headers, verify=verify,
            auth=httpx.BasicAuth(*s.login) if s.login else None,
            timeout=httpx.Timeout(s.timeout_s, connect=min(s.timeout_s, 3.0)),
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=8,
                                keepalive_expiry=60.0))

    def _call(self, coro, timeout_s: float | None):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    def _headers(self) -> dict[str, str]:
        token = self.settings.bearer()
        return {"Authorization": f"Bearer {token}"} if token else {}

    # -- plain requests -----------------------------------------------------------------------

    def get_json(self, path: str, timeout_s: float | None = None):
        """GET ``path`` and decode its JSON body; raises TransportError."""
        return self._call(self._json("GET", path, None, timeout_s), None)

    def post_json(self, path: str, body: dict, timeout_s: float | None = None):
        """POST a JSON body to ``path`` and decode the JSON answer; raises TransportError."""
        return self._call(self._json("POST", path, body, timeout_s), None)

    async def _json(self, method: str, path: str, body: dict | None, timeout_s: float | None):
        self.requests += 1
        timeout = httpx.USE_CLIENT_DEFAULT if timeout_s is None else timeout_s
        try:
            response = await self._client.request(method, path, json=body,
                                                  headers=self._headers(), timeout=timeout)
        except httpx.HTTPError as exc:
            raise _classify(exc) from None
        if response.is_redirect:
            location = redact_url(str(response.request.url.join(response.headers["location"])))
            raise TransportError("http", f"HTTP {response.status_code}: the engine redirects to"
                                 f" {location}: set [backend] url to that address")
        _check_status(response.status_code, response.headers, response.text[:200])
        try:
            return response.json()
        except ValueError:
            raise TransportError("protocol", f"{method} {path}: the answer is not JSON") from None

    # -- streams ------------------------------------------------------------------------------

    def stream_lines(self, path: str, body: dict,
                     cancelled: Callable[[], bool] = lambda: False) -> Iterator[str]:
        """POST ``body`` and yield the response's lines as they arrive.

        Closing the generator early (a stop rule, ``break``) or ``cancelled()`` turning true
        closes the response at once. Raises TransportError, or Cancelled.
        """
        lines: queue.SimpleQueue = queue.SimpleQueue()
        done = object()
        task = self._call(self._spawn(self._read(path, body, lines, done)), None)
        start = last = time.monotonic()
        try:
            while True:
                try:
                    item = lines.get(timeout=_POLL_S)
                except queue.Empty:
                    item = None
                    if cancelled():
                        raise Cancelled() from None
                now = time.monotonic()
                if isinstance(item, str) and _carries_something(item):
                    last = now
                self._check_deadlines(start, last, now)
                if item is None:
                    continue
                if item is done:
                    return
                if isinstance(item, TransportError):
                    raise item
                yield item
                if cancelled():
                    raise Cancelled()
        finally:
            if not task.done():
                self._loop.call_soon_threadsafe(task.cancel)

    async def _spawn(self, coro) -> asyncio.Task:
        return asyncio.ensure_future(coro)

    def _check_deadlines(self, start: float, last: float, now: float) -> None:
        s = self.settings
        if now - last > s.timeout_s:
            what = "its first token" if last == start else "the next token"
            raise TransportError("timeout", f"no {what} in {s.timeout_s:g} s")
        if now - start > s.stream_timeout_s:
            raise TransportError("timeout", f"the stream went on past {s.stream_timeout_s:g} s"
                                 " ([backend] stream_timeout_ms)")

    async def _read(self, path: str, body: dict, lines: queue.SimpleQueue, done: object) -> None:
        try:
            for _ in range(2):  # a redirect to the same origin is followed once
                self.requests += 1
                async with self._client.stream("POST", path, json=body,
                                               headers=self._headers()) as response:
                    if response.is_redirect:
                        path = self._redirect_target(response)
                        continue
                    if response.status_code >= 400:
                        text = (await response.aread()).decode("utf-8", "replace")[:200]
                        _check_status(response.status_code, response.headers, text)
                    _check_stream_type(response.headers.get("content-type", ""))
                    await self._split_lines(response, lines)
                    return
            raise TransportError("http", "redirected more than once: set [backend] url to the"
                                 " engine's own address")
        except TransportError as exc:
            lines.put(exc)
        except httpx.HTTPError as exc:
            lines.put(_classify(exc))
        finally:
            lines.put(done)

    async def _split_lines(self, response: httpx.Response, lines: queue.SimpleQueue) -> None:
        """Put the body's lines on ``lines``, reading at most ``max_stream_bytes``."""
        cap = self.settings.max_stream_bytes
        total = 0
        pending = b""
        async for chunk in response.aiter_bytes():
            total += len(chunk)
            if total > cap:
                raise TransportError("protocol", f"the engine sent over {cap // 1024} KiB for"
                                     " one completion")
            *whole, pending = (pending + chunk).split(b"\n")
            for line in whole:
                lines.put(line.rstrip(b"\r").decode("utf-8", "replace"))
        if pending:
            lines.put(pending.rstrip(b"\r").decode("utf-8", "replace"))

    @staticmethod
    def _redirect_target(response: httpx.Response) -> str:
        """The URL to post to again, when the redirect stays on the engine's origin."""
        target = response.request.url.join(response.headers.get("location", ""))
        here = response.request.url
        if (target.scheme, target.host, target.port) != (here.scheme, here.host, here.port):
            raise TransportError("http", f"HTTP {response.status_code}: the engine redirects to"
                                 f" {redact_url(str(target))}: set [backend] url to that address")
        return str(target)

    def close(self) -> None:
        try:
            self._call(self._client.aclose(), 5.0)
        except Exception:  # closing anyway
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5.0)


def _check_status(status: int, headers: httpx.Headers, text: str) -> None:
    if status < 400:
        return
    if status in (401, 403):
        raise TransportError("auth", f"HTTP {status}", status)
    if status == 429 or status == 503:
        raise TransportError("busy", f"HTTP {status}", status, _retry_after(headers))
    raise TransportError("http", f"HTTP {status}: {_one_line(text)}", status)


def _check_stream_type(content_type: str) -> None:
    kind = content_type.split(";")[0].strip().lower()
    if kind not in STREAM_TYPES:
        raise TransportError("protocol", f"the answer is {kind}, not a completion stream: is"
                             " [backend] url the engine's address?")


def _carries_something(line: str) -> bool:
    """Whether a stream line is more than a blank separator or an SSE comment (a keep-alive)."""
    return bool(line.strip()) and not line.startswith(":")


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _one_line(text: str) -> str:
    return " ".join(text.split())[:160]


def _classify(exc: httpx.HTTPError) -> TransportError:
    cause = exc.__cause__ or exc.__context__
    chain = f"{exc} {cause}"
    if isinstance(exc, httpx.TimeoutException):
        return TransportError("timeout", "the connection timed out")
    if isinstance(cause, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in chain or "SSL" in chain:
        return TransportError("tls", "TLS verification failed")
    if isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError,
                        httpx.WriteError)):
        return TransportError("refused", "cannot connect" if isinstance(exc, httpx.ConnectError)
                              else "the connection broke")
    return TransportError("protocol", type(exc).__name__)
