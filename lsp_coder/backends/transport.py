"""HTTP to a serving engine: one pooled keep-alive client, streams that close at once on cancel.

The client is an ``httpx.AsyncClient`` running on its own event loop thread. The caller (the
inference worker thread) consumes a stream line by line and polls its cancel check while it
waits; a cancel, a stop rule or a superseding request cancels the reading task, which closes
the response (the engine sees the disconnect and frees its slot) without waiting for the next
byte from the engine.
"""

from __future__ import annotations

import asyncio
import queue
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx

_POLL_S = 0.01
"""How often a waiting stream looks at its cancel check."""


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
    verify: bool = True
    ca_file: str = ""
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
        try:
            while True:
                try:
                    item = lines.get(timeout=_POLL_S)
                except queue.Empty:
                    if cancelled():
                        raise Cancelled() from None
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

    async def _read(self, path: str, body: dict, lines: queue.SimpleQueue, done: object) -> None:
        self.requests += 1
        try:
            async with self._client.stream("POST", path, json=body,
                                           headers=self._headers()) as response:
                if response.status_code >= 400:
                    text = (await response.aread()).decode("utf-8", "replace")[:200]
                    _check_status(response.status_code, response.headers, text)
                async for line in response.aiter_lines():
                    lines.put(line)
        except TransportError as exc:
            lines.put(exc)
        except httpx.HTTPError as exc:
            lines.put(_classify(exc))
        finally:
            lines.put(done)

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
        return TransportError("timeout", "no answer in time")
    if isinstance(cause, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in chain or "SSL" in chain:
        return TransportError("tls", "TLS verification failed")
    if isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError,
                        httpx.WriteError)):
        return TransportError("refused", "cannot connect" if isinstance(exc, httpx.ConnectError)
                              else "the connection broke")
    return TransportError("protocol", type(exc).__name__)
