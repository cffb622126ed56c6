"""The session's commands: its statistics, its status, and the count of accepted
suggestions."""

from __future__ import annotations

from typing import Any

from .session import LspCoderServer
from .status import STATUS_COMMAND

STATS_COMMAND = "lspCoder.stats"
ACCEPTED_COMMAND = "lspCoder.accepted"


def register_commands(server: LspCoderServer) -> None:
    """Register the commands on ``server``."""

    @server.command(STATS_COMMAND)
    def stats(ls: LspCoderServer, *args: Any) -> dict:
        return ls.stats.snapshot({**ls.service.snapshot(), "editors": ls.host.editors(ls.slot),
                                  "busy": ls.scheduler.busy,
                                  "loading": ls.scheduler.loading,
                                  "idle_running": ls.scheduler.idle_running,
                                  "idle_queued": ls.scheduler.idle_queued})

    @server.command(STATUS_COMMAND)
    def status(ls: LspCoderServer, *args: Any) -> dict:
        return ls.status.current()

    @server.command(ACCEPTED_COMMAND)
    def accepted(ls: LspCoderServer, *args: Any) -> None:
        ls.stats.count("accepted")
