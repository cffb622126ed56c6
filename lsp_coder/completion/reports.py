"""What the service reports of itself (event loop, cheap): its figures for ``lspCoder.stats``
(``snapshot``) and whether suggestions can come, for an editor's status display (``status``)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..config import Config
from .lifecycle import BackendLifecycle
from .related import RelatedContext


class Reports:
    """``CompletionService``'s reports of itself (a part of it, not used alone)."""

    config: Config
    lifecycle: BackendLifecycle
    related: RelatedContext
    _excluded: tuple[str, str] | None
    """(document, why) when the last request was for a document excluded from the model (the
    service's)."""
    # The service's too: backend and error.

    def snapshot(self) -> dict[str, Any]:
        """Whether a backend is ready, the load error, the backend and its cache memory (see
        ``BackendLifecycle.snapshot``), and with a workspace being indexed ``workspace_index``
        (``related.workspace.IndexStats``)."""
        out = self.lifecycle.snapshot()
        index = self.related.index
        if index is not None:
            out["workspace_index"] = asdict(index.stats())
        return out

    def status(self) -> dict[str, Any]:
        """Whether suggestions can come, for an editor's status display (event loop, cheap).

        ``state``: "ready"; "error" (no model or no backend; ``message`` says why);
        "unreachable" (the serving engine does not answer; ``message`` names its URL and the
        fix); "excluded" (the last request was for a document excluded from the model;
        ``message`` names it and why). ``backend``: the backend's kind; ``url``: a serving
        engine's address.
        """
        out = {"state": "ready", "message": self.error or "", "backend": self.config.backend.kind,
               "url": ""}
        backend = self.backend
        if backend is None:
            out.update(state="error", message=self.error or "no model loaded")
            return out
        excluded = self._excluded
        if excluded is not None:
            out.update(state="excluded", message=f"lsp-coder does not complete {excluded[0]}:"
                       f" {excluded[1]}")
        shown = backend.status()
        out["url"] = shown.get("url") or ""
        health = shown.get("health") or {}
        if health.get("up") is False:
            out.update(state="unreachable", message=health.get("error")
                       or f"the completion engine at {out['url']} does not answer")
        return out
