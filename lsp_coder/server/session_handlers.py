"""The handlers of the session's lifecycle: ``initialize`` (the settings, the model, the
workspace folders), ``initialized`` (the model's load), configuration and workspace changes,
``shutdown``."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from .menu_item import wants_menu_item
from .session import LspCoderServer
from .status import wants_status


def register_session_handlers(server: LspCoderServer, startup_problem: str | None) -> None:
    """Register the lifecycle handlers on ``server`` (``startup_problem``: what went wrong
    reading the config file, told to the user once the session is initialized)."""

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

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: LspCoderServer, *args: Any) -> None:
        ls.scheduler.shutdown()


def _folders(params: types.InitializeParams) -> list[str]:
    """The workspace folders of ``initialize``: ``workspaceFolders``, else ``rootUri``, else
    ``rootPath``."""
    if params.workspace_folders:
        return [f.uri for f in params.workspace_folders]
    if params.root_uri:
        return [params.root_uri]
    return [params.root_path] if params.root_path else []
