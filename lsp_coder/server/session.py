"""One editor session: its documents, settings, statistics and scheduler, and the loading and
changing of the model it completes with."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..completion.service import CompletionRequest, CompletionService
from ..config import Config, ConfigError, apply, model_key
from ..config.files import absolute_paths
from ..config.layers import settings_layer
from ..load_progress import LoadProgress
from .host import EngineHost, ModelSlot
from .protocol import LspCoderProtocol
from .scheduler import Scheduler
from .stats import Stats
from .status import StatusReporter

log = logging.getLogger(__name__)


def settle_heap() -> None:
    """After a load: collect once and freeze what survives (the model's vocabulary tables,
    pygls, lsprotocol), so later full garbage collections no longer walk those long-lived
    objects. A collection runs in whichever thread allocates and holds the GIL, so each one
    stalls the event loop for as long as it takes."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class LspCoderServer(LanguageServer):
    """One editor session: its documents, settings, statistics and scheduler, on the model and
    worker its ``host`` shares with the other sessions of the process."""

    def __init__(self, host: EngineHost, base_config: Config, cwd: str | None = None) -> None:
        super().__init__("lsp-coder", __version__, protocol_cls=LspCoderProtocol)
        self.host = host
        self.cwd = cwd or os.getcwd()
        """The folder the editor started lsp-coder in: relative file paths in settings are
        read from there."""
        self.base_config = base_config  # the config file's (each client's settings go over it)
        self.slot: ModelSlot | None = None
        """The model this session completes with (set at ``initialize``)."""
        self.load_needed = True  # whether "initialized" loads the model
        self.service = CompletionService(base_config, indexes=host.indexes)
        self.stats = Stats()
        self.scheduler = Scheduler(self.service, self.stats, host,
                                   lambda: self.config.completion.debounce_ms,
                                   lambda: self.config.idle,
                                   lambda: None if self.slot is None else self.slot.loading)
        self.load_task: asyncio.Task | None = None  # keeps the load from being collected
        self.loop: asyncio.AbstractEventLoop | None = None
        self.status = StatusReporter(self)
        self.menu_item = True  # whether completion lists carry the suggestion (menu_item.py)
        host.join(self)

    def notify_from_thread(self, level: str, message: str) -> None:
        """Show a backend's message (called from its threads)."""
        kind = {"error": types.MessageType.Error, "warning": types.MessageType.Warning}.get(
            level, types.MessageType.Info)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.tell, message, kind)
            self.loop.call_soon_threadsafe(self.status.update)  # an engine went down or up

    @property
    def config(self) -> Config:
        """The settings in force (the service's)."""
        return self.service.config

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log a failure outside a request (no popup: the user cannot act on it)."""
        log.error("%s: %s", getattr(source, "__name__", source), type(error).__name__)

    def tell(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        """Show and log one message."""
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def use_model(self, slot: ModelSlot) -> ModelSlot | None:
        """Complete with ``slot``'s model from now on (event loop); returns the one used
        before."""
        old = self.slot
        if old is not None:
            old.users.discard(self)
        self.slot = slot
        slot.users.add(self)
        self.service.lifecycle = slot.lifecycle
        self.host.changed()
        return old

    def choose_model(self, config: Config) -> ModelSlot:
        """Take ``config``; returns the model its settings choose (see ``change_model``)."""
        self.service.reconfigure(config)
        return self.host.slot(model_key(config))

    async def change_model(self, slot: ModelSlot) -> None:
        """Complete with ``slot``'s model: at once when it is loaded, else once it is (this
        session loads it, or waits for another session's load); the model left behind is
        closed when no session uses it any more."""
        if slot.loading is not None:
            await asyncio.shield(slot.loading)
        if slot.lifecycle.backend is None:
            await self.load_model(slot)
        elif slot is not self.slot:
            await self._free(self.use_model(slot))

    async def _free(self, old: ModelSlot | None) -> None:
        if old is not None and not old.users and old.loading is None:
            self.host.slots.pop(old.key, None)
            await self.scheduler.run(old.lifecycle.close)

    async def load_model(self, slot: ModelSlot) -> None:
        """Load ``slot``'s model on the worker, reporting progress to the client; this
        session's requests wait meanwhile if it has no model yet, else the model it has
        serves them until the new one is ready (and keeps serving if that fails)."""
        host = self.host
        host.begin_loading(slot)
        self.status.update()
        try:
            error = await self._load_model(slot)
        finally:
            host.end_loading(slot)
            self.status.update()
        # After the load has ended: on the shared worker this may wait behind another
        # session's work, and the model is ready meanwhile.
        await self.scheduler.run(settle_heap)
        if error is None and slot is not self.slot:
            await self._free(self.use_model(slot))
        elif error is not None and slot is not self.slot and not slot.users:
            host.slots.pop(slot.key, None)

    def _load_on_worker(self, slot: ModelSlot, progress: LoadProgress | None) -> str | None:
        """The load itself (worker thread): models no session uses make room first."""
        for unused in self.host.unused(keep=slot):
            unused.lifecycle.close()
        fallback = self.slot is not None and self.slot is not slot and (
            self.slot.lifecycle.backend is not None)
        return self.service.load(progress, slot.lifecycle, fallback=fallback)

    async def _load_model(self, slot: ModelSlot) -> str | None:
        token = None
        if get_capability(self.client_capabilities, "window.work_done_progress", False):
            token = str(uuid.uuid4())
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="lsp-coder", message="loading model", percentage=0))
            except Exception:  # client refused the token: fall back to a message
                token = None
        if token is None:
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Info, message="lsp-coder: loading model"))
        progress = None
        if token is not None:
            progress = LoadProgress(self.service.load_plan(),
                                    self._progress_reporter(token, asyncio.get_running_loop()))
        error = await self.scheduler.run(self._load_on_worker, slot, progress)
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(
                message="model failed to load" if error else "model ready"))
        if error:
            self.tell(error)
            return error
        info = slot.lifecycle.describe()
        if info.get("url"):
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Info,
                message=f"lsp-coder: completing on {info['kind']} at {info['url']}"))
            return None
        for warning in info["warnings"]:
            self.tell(f"lsp-coder: {warning}", types.MessageType.Warning)
        draft = info["draft"] or info.get("draft_left_out") or "none"
        self.window_log_message(types.LogMessageParams(
            type=types.MessageType.Info,
            message=f"lsp-coder: loaded {info['model']} (draft: {draft})"))
        return None

    def _progress_reporter(self, token: str, loop: asyncio.AbstractEventLoop):
        """A ``LoadProgress`` listener (called on the worker) that reports on ``token``."""

        def report(percent: int, label: str) -> None:
            loop.call_soon_threadsafe(self.work_done_progress.report, token,
                                      types.WorkDoneProgressReport(message=label or None,
                                                                   percentage=percent))

        return report

    def apply_settings(self, layer: Any, source: str, over: Config | None = None) -> Config:
        """The settings with a layer merged over ``over`` (default: the session's config); on
        error the user is told and the keys that cannot be used keep their values (a bad key
        costs only itself, ``config.apply``)."""
        below = self.config if over is None else over
        try:
            new = apply(below, settings_layer(layer) or None, source)
        except ConfigError as exc:
            self.tell(f"lsp-coder: {exc}")  # names each bad key and what it keeps
            if exc.usable is None:
                return below
            new = exc.usable
        return absolute_paths(new, self.cwd)

    def end(self) -> None:
        """The session is over (its client left or exited): its work stops and what it kept
        is dropped; the model stays for the other sessions."""
        for uri in self.protocol.documents.uris():
            self.service.forget(uri)
            self.scheduler.forget(uri)
        self.scheduler.shutdown()
        self.service.end()
        self.loop_watch.stop()
        self.host.leave(self)
        self.slot = None

    def request(self, uri: str, position: types.Position, budget_ms: float | None):
        """The completion request at a position of an open document, the document and the
        position clamped to the text (the LSP asks positions past a line's end to count as its
        end); (None, None, position) for a document that is not open.
        """
        doc = self.protocol.documents.get(uri)
        if doc is None:
            return None, None, position
        position = doc.clamp(position)
        text, offset = doc.text, doc.text_offset(position)
        path = to_fs_path(uri) or uri
        return CompletionRequest(uri=uri, text=text, offset=offset,
                                 path=Path(path).name, language_id=doc.language_id or "",
                                 budget_ms=budget_ms), doc, position
