"""A client session with the real server over stdio, for ``try`` and ``bench``.

It keeps the document text on the client side, sends incremental changes with UTF-16
positions as editors do, and asks for inline completions.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types
from pygls.lsp.client import LanguageClient


def position_at(text: str, offset: int) -> types.Position:
    """The LSP position (UTF-16 columns) of str index ``offset``."""
    line = text.count("\n", 0, offset)
    col_text = text[text.rfind("\n", 0, offset) + 1 : offset]
    return types.Position(line=line, character=len(col_text.encode("utf-16-le")) // 2)


def process_rss_bytes(pid: int | None) -> int:
    """Resident memory of the process ``pid`` (Linux), 0 if unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, TypeError):
        pass
    return 0


class ModelNotLoaded(RuntimeError):
    """The server started, but no model or serving engine is ready."""


class Session:
    """One server process and one document being edited (others may be open too).

    ``root``: the workspace folder the client reports (``rootUri`` and ``workspaceFolders``),
    as an editor opened on a project does; None for a file opened alone.
    """

    def __init__(self, options: dict[str, Any] | None = None, config: str | None = None,
                 verbose: bool = False, server_log: Path | None = None,
                 on_progress: Callable[[int, str], None] | None = None,
                 root: Path | None = None, shared: bool = False) -> None:
        """``on_progress`` hears the server's load progress (percentage, message); ``shared``:
        the process started forwards to the user's shared server (what editors get), else it
        serves with its own model (``--no-shared``: what it measures is its own)."""
        self.options = options or {}
        self.shared = shared
        self.config = config
        self.root = root
        self.client = LanguageClient("lsp-coder-session", "1")
        self.messages: list[str] = []
        self.uri = ""
        self.text = ""
        self.version = 0
        self.server_log = server_log
        self._drain: asyncio.Task | None = None

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)
            if verbose:
                print(f"[server] {params.message}", flush=True)

        self.on_progress = on_progress

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value if isinstance(params.value, dict) else {}
            if self.on_progress is not None and value.get("kind") in ("begin", "report"):
                self.on_progress(int(value.get("percentage") or 0), value.get("message") or "")

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            if params.type == types.MessageType.Error:
                self.messages.append(params.message)

    @property
    def pid(self) -> int | None:
        server = getattr(self.client, "_server", None)
        return None if server is None else server.pid

    def rss_bytes(self) -> int:
        """Resident memory of the server process (Linux), 0 if unknown."""
        return process_rss_bytes(self.pid)

    async def start(self, timeout_s: float = 900.0) -> dict:
        """Start the server, initialize, and wait until the model loaded (or failed)."""
        args = [sys.executable, "-m", "lsp_coder"] + (["--config", self.config]
                                                      if self.config else [])
        if not self.shared:
            args.append("--no-shared")
        if self.server_log is not None:
            args.append("-vv")
        await self.client.start_io(*args)
        # The server's stderr is a pipe: read it all, or a chatty server blocks on a full one.
        self._drain = asyncio.create_task(self._drain_stderr())
        root_uri = None if self.root is None else self.root.as_uri()
        folders = None if self.root is None else [
            types.WorkspaceFolder(uri=root_uri, name=self.root.name)]
        await self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(window=types.WindowClientCapabilities(
                work_done_progress=self.on_progress is not None)),
            process_id=None, root_uri=root_uri, workspace_folders=folders,
            initialization_options=self.options))
        self.client.initialized(types.InitializedParams())
        deadline = time.monotonic() + timeout_s
        while True:
            totals = (await self.stats())["totals"]
            if (totals.get("model_loaded") or totals.get("error")) and not totals.get("loading"):
                return totals
            if time.monotonic() > deadline:
                return totals
            await asyncio.sleep(0.2)

    async def start_loaded(self, name: str, timeout_s: float = 900.0) -> dict:
        """``start``, then raise ``ModelNotLoaded`` (the server closed) when no model or
        serving engine is ready; ``name`` says whose start it was."""
        totals = await self.start(timeout_s)
        if not totals.get("model_loaded"):
            await self.close()
            raise ModelNotLoaded(f"{name}: the model did not load: {totals.get('error')}")
        return totals

    async def _drain_stderr(self) -> None:
        server = getattr(self.client, "_server", None)
        stream = None if server is None else server.stderr
        if stream is None:
            return
        sink = None if self.server_log is None else self.server_log.open("ab")
        try:
            while chunk := await stream.read(65536):
                if sink is not None:
                    sink.write(chunk)
                    sink.flush()
        finally:
            if sink is not None:
                sink.close()

    async def stats(self) -> dict:
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="lspCoder.stats"))
        return result if isinstance(result, dict) else {"totals": {}, "recent": []}

    async def health(self) -> dict[str, float]:
        """``lspCoder.health``: the event loop's longest block since the last call, among
        others. A request goes first: pygls may answer a request that follows a notification
        before the notification's handler has run, so that handler's cost would land in the
        next call."""
        await self.stats()
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="lspCoder.health"))
        return result if isinstance(result, dict) else {}

    def open(self, uri: str, text: str, language_id: str = "python") -> None:
        self.uri, self.text, self.version = uri, text, 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=1,
                                                 text=text)))

    def insert(self, offset: int, chars: str) -> int:
        """Type ``chars`` at ``offset``; returns the new cursor offset."""
        pos = position_at(self.text, offset)
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri,
                                                                version=self.version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=pos, end=pos), text=chars)]))
        self.text = self.text[:offset] + chars + self.text[offset:]
        return offset + len(chars)

    def delete(self, offset: int, n: int) -> int:
        """Backspace ``n`` characters before ``offset``; returns the new cursor offset."""
        if n <= 0:
            return offset
        start = offset - n
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri,
                                                                version=self.version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=position_at(self.text, start),
                                  end=position_at(self.text, offset)), text="")]))
        self.text = self.text[:start] + self.text[offset:]
        return start

    def inline_params(self, offset: int) -> types.InlineCompletionParams:
        """An inline completion request at ``offset`` as typing triggers it."""
        return types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri),
            position=position_at(self.text, offset),
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Automatic))

    async def inline(self, offset: int) -> str:
        """The first inline suggestion at ``offset`` ("" if none)."""
        result = await self.client.text_document_inline_completion_async(
            self.inline_params(offset))
        items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
        return str(items[0].insert_text) if items else ""

    async def highlight(self, offset: int) -> int:
        """Ask for the highlights at ``offset`` as VS Code does where the cursor rests; how
        many ranges came back."""
        result = await self.client.text_document_document_highlight_async(
            types.DocumentHighlightParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri),
                position=position_at(self.text, offset)))
        return len(result or [])

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), timeout=30)
            self.client.exit(None)
        finally:
            await self.client.stop()
            if self._drain is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._drain, timeout=5)
