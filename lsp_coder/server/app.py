"""The language server: thin handlers that translate between LSP and the completion service."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..completion.service import CompletionRequest, CompletionService, Suggestion
from ..config import Config, ConfigError, apply, model_key
from ..config.files import absolute_paths
from ..config.layers import settings_layer
from ..load_progress import LoadProgress
from .changed_lines import changed_lines
from .health import register_health_commands
from .highlights import word_highlights
from .host import EngineHost, ModelSlot
from .menu_item import wants_menu_item
from .protocol import LspCoderProtocol
from .scheduler import Scheduler
from .stats import Stats
from .status import STATUS_COMMAND, StatusReporter, wants_status
from .words import word_start

log = logging.getLogger(__name__)

STATS_COMMAND = "lspCoder.stats"
ACCEPTED_COMMAND = "lspCoder.accepted"
SORT_AFTER_SERVER_ITEMS = "~"
"""The ``sortText`` prefix of the completion item: after digits and letters (see
``_completion_items``)."""


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
        self.service = CompletionService(base_config)
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
            await self.scheduler.run(settle_heap)
        finally:
            host.end_loading(slot)
            self.status.update()
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
        self.window_log_message(types.LogMessageParams(
            type=types.MessageType.Info,
            message=f"lsp-coder: loaded {info['model']} (draft: {info['draft']})"))
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


def build_server(host: EngineHost, base_config: Config, startup_problem: str | None = None,
                 cwd: str | None = None) -> LspCoderServer:
    """A new editor session on ``host`` (``startup_problem``: what went wrong reading the config
    file, told to the user once the session is initialized; ``cwd``: the folder the editor
    started lsp-coder in, default this process's)."""
    server = LspCoderServer(host, base_config, cwd)
    register_health_commands(server)

    @server.feature(types.INITIALIZE)
    def initialize(ls: LspCoderServer, params: types.InitializeParams) -> None:
        # Over the config file's settings: each editor session brings its own.
        config = ls.apply_settings(params.initialization_options, "initializationOptions",
                                   over=ls.base_config)
        slot = ls.choose_model(config)
        ls.use_model(slot)
        ls.service.workspace_folders(_folders(params))
        ls.status.begin(wants_status(params.capabilities))
        ls.menu_item = wants_menu_item(params.capabilities)
        ls.load_needed = slot.lifecycle.backend is None and slot.loading is None
        if ls.load_needed:  # loaded after "initialized"; requests wait until the load ends
            ls.host.begin_loading(slot)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: LspCoderServer, params: types.InitializedParams) -> None:
        if startup_problem:
            ls.tell(startup_problem)
        ls.loop = asyncio.get_running_loop()
        if ls.load_needed and ls.slot is not None:
            ls.load_task = asyncio.ensure_future(ls.load_model(ls.slot))
        ls.host.changed()  # one more editor (and, with the model there, ready)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: LspCoderServer,
                                       params: types.DidChangeConfigurationParams) -> None:
        config = ls.apply_settings(params.settings, "workspace/didChangeConfiguration")
        await ls.change_model(ls.choose_model(config))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: LspCoderServer,
                                     params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.service.workspace_folders([f.uri for f in ls.workspace.folders.values()])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: LspCoderServer,
                                 params: types.DidChangeWatchedFilesParams) -> None:
        ls.service.files_changed([change.uri for change in params.changes])

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LspCoderServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        ls.service.document_opened(doc.uri, doc.text)
        ls.scheduler.opened(doc.uri, Path(to_fs_path(doc.uri) or doc.uri).name, doc.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LspCoderServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.protocol.documents.get(params.text_document.uri)
        if doc is not None:
            first, last = changed_lines(params.content_changes)
            ls.service.document_changed(doc.uri, first, last, lambda: doc.text)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LspCoderServer, params: types.DidSaveTextDocumentParams) -> None:
        doc = ls.protocol.documents.get(params.text_document.uri)
        ls.service.document_saved(params.text_document.uri,
                                  params.text if params.text is not None else (
                                      doc.text if doc is not None else None))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LspCoderServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.service.forget(params.text_document.uri)
        ls.scheduler.forget(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    def document_highlight(ls: LspCoderServer, params: types.DocumentHighlightParams):
        req, doc, position = ls.request(params.text_document.uri, params.position, None)
        if req is None:
            return None
        ls.scheduler.cursor_moved(req.uri, req.path, req.text, req.offset)
        return word_highlights(doc, position)

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(ls: LspCoderServer, params: types.InlineCompletionParams):
        req, _doc, position = ls.request(params.text_document.uri, params.position,
                                         ls.config.completion.inline_budget_ms or None)
        if req is None:
            return None
        invoked = params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked
        if invoked:
            req = replace(req, alternatives=ls.config.completion.alternatives)
        suggestion = await ls.scheduler.complete(req, "inline", invoked=invoked)
        ls.status.update()
        return types.InlineCompletionList(items=_inline_items(suggestion, position))

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(
        trigger_characters=[".", "("], resolve_provider=False))
    async def completion(ls: LspCoderServer, params: types.CompletionParams):
        if not ls.menu_item:  # the client shows the suggestion as ghost text
            return types.CompletionList(is_incomplete=False, items=[])
        req, doc, position = ls.request(params.text_document.uri, params.position,
                                        ls.config.completion.completion_budget_ms)
        if req is None:
            return None
        suggestion = await ls.scheduler.complete(
            req, "completion", hard_budget_ms=ls.config.completion.completion_budget_ms)
        ls.status.update()
        return types.CompletionList(is_incomplete=True,
                                    items=_completion_items(suggestion, req, doc, position))

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

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: LspCoderServer, *args: Any) -> None:
        ls.scheduler.shutdown()

    return server


def _folders(params: types.InitializeParams) -> list[str]:
    """The workspace folders of ``initialize``: ``workspaceFolders``, else ``rootUri``, else
    ``rootPath``."""
    if params.workspace_folders:
        return [f.uri for f in params.workspace_folders]
    if params.root_uri:
        return [params.root_uri]
    return [params.root_path] if params.root_path else []


def _inline_items(suggestion: Suggestion, position: types.Position):
    """The suggestion, then its alternatives (a client cycles through them in this order)."""
    if not suggestion.text:
        return []
    return [types.InlineCompletionItem(
        insert_text=text,
        range=types.Range(start=position, end=position),
        command=types.Command(title="lsp-coder: accepted", command=ACCEPTED_COMMAND,
                              arguments=[suggestion.stop_reason or "ok"]),
    ) for text in (suggestion.text, *suggestion.alternatives)]


def _completion_items(suggestion: Suggestion, req: CompletionRequest, doc,
                      position: types.Position) -> list[types.CompletionItem]:
    """The suggestion as one menu item, ranked after the language server's items that match
    the typed word as well as it does.

    Not preselected. ``sortText`` is ``~`` and the label: ``~`` sorts after the digits and
    letters the servers' own ``sortText`` keys are made of (jedi ``v0001``, gopls ``00001``,
    rust-analyzer hex), so a client that orders by ``sortText`` alone (eglot, Neovim's
    menu) shows the server's exact names first and this multi-line guess below them, and a
    client that ranks by how well the typed text matches first (VS Code, Helix) still lifts it
    when the user types further into the suggestion than any other item matches. Kind Text,
    not Snippet: VS Code's ``editor.snippetSuggestions = "top"`` lifts snippets above all.
    """
    if not suggestion.text:
        return []
    line_start = req.text.rfind("\n", 0, req.offset) + 1
    start = word_start(req.text, line_start, req.offset)
    word = req.text[start : req.offset]
    start_char = position.character - doc.client_units(word)
    new_text = word + suggestion.text
    label = new_text.split("\n", 1)[0].strip() or new_text.strip().split("\n", 1)[0]
    return [types.CompletionItem(
        label=label,
        kind=types.CompletionItemKind.Text,
        detail="lsp-coder",
        documentation=types.MarkupContent(kind=types.MarkupKind.PlainText, value=new_text),
        filter_text=new_text,
        sort_text=SORT_AFTER_SERVER_ITEMS + label,
        insert_text_format=types.InsertTextFormat.PlainText,
        text_edit=types.TextEdit(
            range=types.Range(start=types.Position(line=position.line, character=start_char),
                              end=position),
            new_text=new_text),
        command=types.Command(title="lsp-coder: accepted", command=ACCEPTED_COMMAND,
                              arguments=["completion"]),
    )]
