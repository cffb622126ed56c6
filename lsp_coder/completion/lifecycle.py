"""The backend's lifecycle: open it from the config, swap it on reload, close it, and word what
went wrong for the user.

Threads: ``load`` and ``close`` run on the one inference worker thread (they use the backend);
``backend`` and ``error`` are read from any thread.
"""

from __future__ import annotations

import logging
from typing import Any

from ..backends.base import Backend
from ..backends.factory import BackendUnavailable, open_backend
from ..backends.health import Notify
from ..config import Config
from ..load_progress import LoadProgress

log = logging.getLogger(__name__)


class BackendLifecycle:
    """Holds the one backend the completion service uses, and the last load error."""

    def __init__(self) -> None:
        self.in_use = Config()
        """The settings of the call running now: those of the completion service (of the
        editor session) that asked, set by ``use`` before each backend call."""
        self.backend: Backend | None = None
        """The backend serving completions; None before a load succeeded."""
        self.error: str | None = None
        """The last load's error message for the user; None after a load succeeded."""
        self.notify: Notify | None = None
        """Where a serving engine's one-per-outage messages go (the server sets it)."""

    def use(self, config: Config) -> None:
        """The calls that follow run with ``config`` (the worker thread, before each call)."""
        self.in_use = config

    def settings(self) -> Config:
        """The settings in force for the running call (what the backend reads)."""
        return self.in_use

    def load(self, progress: LoadProgress | None = None, fallback: bool = False) -> str | None:
        """Open the backend the settings name; returns an error message on failure.

        For a local model it is transactional: the new engine is loaded before the old one is
        closed, and on failure the old one (if any) keeps serving. A serving engine replaces
        the old backend at once (no model is loaded or assembled for it). ``progress`` hears
        each stage of the load, and reaches 100 % when it succeeds. ``fallback``: another
        lifecycle's model keeps serving the caller if this load fails (the message says so).
        """
        config = self.settings()
        remote = config.backend.kind != "local"
        if remote:
            self.close()
        try:
            backend = open_backend(config, self.settings, progress, self.notify)
        except BackendUnavailable as exc:
            if self.backend is None and not fallback:
                what = "no backend" if remote else "no model loaded"
                self.error = f"lsp-coder: {what}: {exc}"
            else:
                self.error = (f"lsp-coder: could not load the new model: {exc}; still serving"
                              " with the previous one")
            log.error(self.error)
            return self.error
        old, self.backend, self.error = self.backend, backend, None
        if old is not None:
            old.close()
        if progress is not None:
            progress.finish()  # stages that had nothing to do (a draft left out) count too
        return None

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None

    def describe(self) -> dict[str, Any]:
        """The backend's figures and warnings (``Backend.describe``); {} without one."""
        return self.backend.describe() if self.backend is not None else {}

    def snapshot(self) -> dict[str, Any]:
        """Whether a backend is ready, the load error, the backend's status and its memory.

        Keys: ``model_loaded`` (a model or a serving engine is ready), ``error``, ``backend``
        (``Backend.status``, or the configured kind without one) and, with a local model,
        ``kv_used_bytes``, ``kv_budget_bytes``, ``kv_evicted_blocks``, ``idle_used_tokens``
        (``Backend.memory``).
        """
        backend = self.backend
        out: dict[str, Any] = {"model_loaded": backend is not None, "error": self.error}
        if backend is None:
            out["backend"] = {"kind": self.settings().backend.kind}
            return out
        out.update(backend.memory())
        out["backend"] = backend.status()
        return out
