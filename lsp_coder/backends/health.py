"""Whether the serving engine answers: one message per outage, background retries with backoff.

While the engine is down, completions answer empty at once (no request is sent); a probe thread
retries with exponential backoff (or the engine's ``Retry-After``) and brings the backend back
by itself. The user is told once when it goes down (naming the URL and the fix) and once when
it is back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from .transport import TransportError

log = logging.getLogger(__name__)

Notify = Callable[[str, str], None]
"""Called with (level, message); level is "error", "warning" or "info"."""

FIRST_RETRY_S = 0.5
MAX_RETRY_S = 30.0


def explain(error: TransportError, url: str, api_key_env: str) -> str:
    """One sentence naming the URL, what went wrong and the fix (never the token)."""
    where = f"lsp-coder: the completion engine at {url}"
    if error.kind == "refused":
        return (f"{where} is not reachable ({error.detail}): start it, or fix [backend] url;"
                " completions resume by themselves once it answers")
    if error.kind == "timeout":
        return (f"{where} did not answer in time ({error.detail}): it is overloaded or too"
                " slow for this team; raise [backend] timeout_ms or add capacity; retrying in"
                " the background")
    if error.kind == "tls":
        return (f"{where}: {error.detail}: set [backend] ca_file to the CA that signed its"
                " certificate (or fix the certificate)")
    if error.kind == "auth":
        if api_key_env:
            return (f"{where} refused the token ({error.detail}): set the environment variable"
                    f" {api_key_env} to a valid token in the editor's environment")
        return (f"{where} asks for a token ({error.detail}): set [backend] api_key_env to the"
                " NAME of an environment variable holding it")
    if error.kind == "busy":
        return (f"{where} is busy ({error.detail}): completions pause and retry with backoff;"
                " add capacity if this persists")
    return (f"{where} failed ({error.detail}): check its log and that [backend] kind matches"
            " the engine; retrying in the background")


class Health:
    """The backend's state, shared by the worker thread, the probe thread and stats.

    An outage is announced once, when a request first fails, and ends only when a real request
    succeeds again (then "answers again" is said once); a probe that succeeds meanwhile lets
    requests through again without a message, so an engine whose health check passes while its
    completions fail does not flap messages.
    """

    def __init__(self, url: str, api_key_env: str, probe: Callable[[], None],
                 notify: Notify | None = None) -> None:
        self.url = url
        self.api_key_env = api_key_env
        self._probe = probe
        self.notify = notify
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._is_up = threading.Event()
        self._is_up.set()
        self._closed = False
        self._announced = ""  # the kind of failure the user was told about, until a success
        self._delay = FIRST_RETRY_S
        self.error: TransportError | None = None
        self.message = ""
        self.failures = 0
        self.outages = 0
        self.skipped = 0
        self._thread: threading.Thread | None = None

    @property
    def up(self) -> bool:
        return self._is_up.is_set()

    def wait_up(self, timeout_s: float) -> bool:
        """Block until requests may be sent again (for tools and tests)."""
        return self._is_up.wait(timeout_s)

    def available(self) -> bool:
        """Whether to send a request now (False while down: answer empty, count it)."""
        if self._is_up.is_set():
            return True
        with self._lock:
            self.skipped += 1
        return False

    def succeeded(self) -> None:
        """A real request worked: the outage (if any) is over."""
        with self._lock:
            self.error = None
            self._delay = FIRST_RETRY_S
            announced, self._announced = self._announced, ""
        self._is_up.set()
        if announced:
            self._tell("info", f"lsp-coder: the completion engine at {self.url} answers again")

    def failed(self, error: TransportError) -> None:
        """A request failed: go down (one message per outage), retry in the background."""
        self._is_up.clear()
        with self._lock:
            self.failures += 1
            self.error = error
            tell = self._announced != error.kind
            if tell:
                self._announced = error.kind
                self.outages += 1
                self.message = explain(error, self.url, self.api_key_env)
            if not self._closed and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._retry, daemon=True,
                                                name="lsp-coder-backend-probe")
                self._thread.start()
        if tell:
            self._tell("error" if error.kind in ("auth", "tls", "refused") else "warning",
                       self.message)

    def _retry(self) -> None:
        while not self._is_up.is_set():
            with self._lock:
                if self._closed:
                    return
                hint = self.error.retry_after_s if self.error else None
                delay = hint if hint is not None else self._delay
                self._delay = min(MAX_RETRY_S, self._delay * 2)
            if self._wake.wait(delay):
                return  # closed
            try:
                self._probe()
            except Exception as exc:  # still down (a probe that cannot parse counts too)
                if isinstance(exc, TransportError):
                    with self._lock:
                        self.error = exc  # its Retry-After paces the next try
                continue
            self._is_up.set()

    def _tell(self, level: str, message: str) -> None:
        getattr(log, level)(message)
        if self.notify is not None:
            try:
                self.notify(level, message)
            except Exception:  # the editor is gone; the log has it
                log.debug("notify failed", exc_info=True)

    def snapshot(self) -> dict:
        with self._lock:
            return {"up": self.up, "error": self.message if self._announced else None,
                    "failures": self.failures, "outages": self.outages,
                    "skipped_while_down": self.skipped}

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._wake.set()
