"""The server's state for an editor's status display: loading, ready, error, unreachable.

A client that sets the experimental capability ``lspCoderStatus`` gets an ``lspCoder/status``
notification whenever the state changes (a load begins or ends, a serving engine stops or starts
answering); any client can ask with the ``lspCoder.status`` command. A load's percentage goes
out as the LSP's own ``$/progress``.
"""

from __future__ import annotations

from typing import Any

STATUS_NOTIFICATION = "lspCoder/status"
STATUS_COMMAND = "lspCoder.status"
STATUS_CAPABILITY = "lspCoderStatus"


def wants_status(capabilities: Any) -> bool:
    """Whether the client's capabilities ask for status notifications."""
    experimental = getattr(capabilities, "experimental", None)
    return isinstance(experimental, dict) and bool(experimental.get(STATUS_CAPABILITY))


class StatusReporter:
    """Tells the client the server's state each time it changes.

    Args:
        server: the language server (its ``service``, ``scheduler`` and ``protocol``).
    """

    def __init__(self, server: Any) -> None:
        self.server = server
        self.enabled = False
        """Whether the client asked for notifications (set by ``begin`` at ``initialize``)."""
        self._sent: dict[str, Any] | None = None

    def begin(self, enabled: bool) -> None:
        """A client initialized: whether it wants notifications; it has been told nothing."""
        self.enabled = enabled
        self._sent = None

    def current(self) -> dict[str, Any]:
        """The state now: the service's, or "loading" while a model load is under way; with
        ``editors``, how many editor sessions share the model, and ``shared``, whether this is
        the user's shared server."""
        status = self.server.service.status()
        if self.server.scheduler.loading:
            status.update(state="loading", message="")
        host = self.server.host
        status.update(editors=host.editors(self.server.slot), shared=host.shared)
        return status

    def update(self) -> None:
        """Send the state if it changed since the last notification (event loop)."""
        if not self.enabled:
            return
        status = self.current()
        if status != self._sent:
            self._sent = status
            self.server.protocol.notify(STATUS_NOTIFICATION, status)
