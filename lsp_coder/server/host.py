"""What every editor session of one server process shares: its models, one worker, one order.

A server process holds its models (each loaded model with its prefix cache, or a serving
engine's client), the one inference worker thread that owns them, and the editor sessions that
use them: one over stdio, several over ``--tcp``, every editor of the user in the shared
server (``lsp_coder.shared``). Editors whose settings choose the same model share it, and the
same text open in two of them shares KV blocks, since blocks are keyed by tokens. Each session
keeps its own documents, settings, statistics and suggestions (``session.LspCoderServer``); what
runs on the worker comes from here, in the order ``RequestQueue`` and ``IdleTurns`` give.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..completion.lifecycle import BackendLifecycle
from ..completion.service import IndexPool
from .idle_turns import IdleTurns
from .worker_state import RequestQueue, WorkerState

log = logging.getLogger(__name__)


@dataclass(eq=False)
class ModelSlot:
    """One model (or serving engine client) of the process, and the sessions using it."""

    key: str
    """``config.model_key`` of the settings that chose it."""
    lifecycle: BackendLifecycle = field(default_factory=BackendLifecycle)
    """Its backend and last load error."""
    users: set[Any] = field(default_factory=set)
    """The editor sessions completing with it."""
    loading: asyncio.Future | None = None
    """Done when the load under way ends; None when none is."""


class EngineHost:
    """The models, the worker and the editor sessions of one server process.

    Sessions whose settings choose the same model (``config.model_key``) share one
    ``ModelSlot``; another model gets a slot of its own, on the same worker. A model no session
    uses stays loaded for the next editor until another model is loaded.

    Args:
        shared: this is the user's shared server (``lsp_coder.shared``), not an editor's own.
    """

    def __init__(self, shared: bool = False) -> None:
        self.shared = shared
        self.slots: dict[str, ModelSlot] = {}
        """The models loaded or being loaded, by key."""
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lsp-coder-engine")
        """The one inference worker thread: every backend call runs on it."""
        self.state: WorkerState = WorkerState()
        """The request job running on the worker, and how many are queued."""
        self.requests: RequestQueue = RequestQueue()
        """Request jobs waiting for the worker."""
        self.sessions: list[Any] = []
        """The editor sessions (``LspCoderServer``), in the order they connected."""
        self.idle_turns = IdleTurns(self.requests_waiting)
        """Whose idle work runs."""
        self.indexes = IndexPool()
        """The workspace indexes, one for the sessions on the same folders and settings."""

    # -- sessions and models --------------------------------------------------------------------

    def join(self, session: Any) -> None:
        self.sessions.append(session)

    def leave(self, session: Any) -> None:
        if session in self.sessions:
            self.sessions.remove(session)
        for slot in self.slots.values():
            slot.users.discard(session)
        self.changed()

    def slot(self, key: str) -> ModelSlot:
        """The model for settings of model key ``key`` (a new, unloaded one the first time)."""
        slot = self.slots.get(key)
        if slot is None:
            slot = self.slots[key] = ModelSlot(key)
            slot.lifecycle.notify = lambda level, message: self._tell(slot, level, message)
        return slot

    def unused(self, keep: ModelSlot) -> list[ModelSlot]:
        """Take the models no session uses out (but ``keep``): the caller closes them on the
        worker."""
        gone = [s for s in self.slots.values() if s is not keep and not s.users
                and s.loading is None]
        for slot in gone:
            del self.slots[slot.key]
        return gone

    def editors(self, slot: ModelSlot | None = None) -> int:
        """How many editor sessions have initialized (and not left), on ``slot`` if given."""
        return sum(1 for s in self.sessions if s.protocol.initialize_received
                   and (slot is None or s in slot.users))

    def changed(self) -> None:
        """Sessions came or went, or a model changed: each one's status may say so."""
        for session in list(self.sessions):
            session.status.update()

    @staticmethod
    def _tell(slot: ModelSlot, level: str, message: str) -> None:
        """A serving engine's one-per-outage message (from its threads) reaches every
        session using it."""
        for session in list(slot.users):
            session.notify_from_thread(level, message)

    # -- the worker -----------------------------------------------------------------------------

    async def run(self, fn: Callable, *args: Any) -> Any:
        """Run ``fn(*args)`` on the worker thread, after what is already queued there."""
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    def submit(self, job: Callable[[], None]) -> asyncio.Future:
        """Queue a request job; the worker runs request jobs in ``RequestQueue``'s order.

        Raises:
            RuntimeError: the worker was shut down.
        """
        self.requests.push(job)
        try:
            return asyncio.get_running_loop().run_in_executor(self.worker, self._run_next)
        except RuntimeError:
            self.requests.pop()
            raise

    def _run_next(self) -> None:
        job = self.requests.pop()
        if job is not None:
            job()

    def requests_waiting(self) -> bool:
        """Whether a request of any session is pending or its work queued or running."""
        return self.state.busy or any(s.scheduler.has_pending for s in self.sessions)

    def shutdown(self) -> None:
        """The process is ending: every session's work stops and the worker takes no more."""
        for session in list(self.sessions):
            session.scheduler.shutdown()
        running = self.state.running
        if running is not None:
            running.token.set()
        self.worker.shutdown(wait=False, cancel_futures=True)

    # -- loading --------------------------------------------------------------------------------

    def begin_loading(self, slot: ModelSlot) -> None:
        """From now until ``end_loading``, completion requests of the sessions on ``slot``
        wait for it instead of being answered empty."""
        if slot.loading is None or slot.loading.done():
            slot.loading = asyncio.get_running_loop().create_future()
        for session in slot.users:
            session.scheduler.idle.prefetched.clear()  # made by the model being replaced

    @staticmethod
    def end_loading(slot: ModelSlot) -> None:
        if slot.loading is not None and not slot.loading.done():
            slot.loading.set_result(None)
        slot.loading = None
