"""``lsp-coder try``: start the real server over stdio as an editor would, and type into it.

It opens a file with a few lines cut out, types those lines back one character at a time
(incremental didChange, an inline completion request per keystroke, not awaited, as editors
do), and prints every non-empty suggestion with its latency, then the server's stats.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from .sample import SAMPLE_PY

KEYSTROKE_S = 0.12


def _position(text: str, offset: int) -> types.Position:
    line = text.count("\n", 0, offset)
    col_text = text[text.rfind("\n", 0, offset) + 1 : offset]
    return types.Position(line=line, character=len(col_text.encode("utf-16-le")) // 2)


def _hole(source: str, lines: int) -> tuple[str, str, int]:
    """Cut ``lines`` lines of code out of ``source``: (text with hole, cut text, offset).

    The cut starts at the first non-blank line from two thirds down, holds ``lines`` lines that
    are not blank, and leaves the newline after them in place.
    """
    all_lines = source.splitlines(keepends=True)
    first = min(len(all_lines) - 1, len(all_lines) * 2 // 3)
    while first < len(all_lines) - 1 and not all_lines[first].strip():
        first += 1
    last, code_lines = first, 0
    while last < len(all_lines) and code_lines < lines:
        code_lines += bool(all_lines[last].strip())
        last += 1
    cut = "".join(all_lines[first:last]).rstrip("\n")
    offset = sum(len(s) for s in all_lines[:first])
    return source[:offset] + source[offset + len(cut) :], cut, offset


async def _run(source: str, uri: str, config: str | None, lines: int) -> int:
    client = LanguageClient("lsp-coder-try", "1")

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def show_message(params: types.ShowMessageParams) -> None:
        print(f"[server] {params.message}", flush=True)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def log_message(params: types.LogMessageParams) -> None:
        if params.type == types.MessageType.Error:
            print(f"[server log] {params.message}", file=sys.stderr, flush=True)

    args = [sys.executable, "-m", "lsp_coder"] + (["--config", config] if config else [])
    await client.start_io(*args)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), process_id=None, root_uri=None))
    client.initialized(types.InitializedParams())
    print("waiting for the model to load...", flush=True)
    if not await _wait_for_model(client):
        print("the model did not load; see the server's message above", file=sys.stderr)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        return 1
    text, typed, offset = _hole(source, lines)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1,
                                             text=text)))
    print(f"typing {len(typed)} characters into {uri} (a request per keystroke)\n", flush=True)
    version = 1
    tasks: list[asyncio.Task] = []
    shown = 0

    async def ask(pos: types.Position, sent: float, at: str) -> None:
        nonlocal shown
        result = await client.text_document_inline_completion_async(
            types.InlineCompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=pos,
                context=types.InlineCompletionContext(
                    trigger_kind=types.InlineCompletionTriggerKind.Automatic)))
        ms = (time.perf_counter() - sent) * 1000
        items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
        if items:
            shown += 1
            suggestion = str(items[0].insert_text).replace("\n", "⏎")
            print(f"{ms:8.0f} ms  after {at!r:<24} → {suggestion[:70]!r}", flush=True)

    for i, ch in enumerate(typed):
        pos = _position(text, offset)
        version += 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=pos, end=pos), text=ch)]))
        text = text[:offset] + ch + text[offset:]
        offset += 1
        typed_so_far = typed[: i + 1].replace("\n", "⏎")
        tasks.append(asyncio.ensure_future(
            ask(_position(text, offset), time.perf_counter(), typed_so_far[-24:])))
        if ch == "\n" or i == len(typed) - 1:
            await asyncio.gather(*tasks)
            tasks.clear()
        else:
            await asyncio.sleep(KEYSTROKE_S)
    stats = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="lspCoder.stats"))
    totals = stats["totals"] if isinstance(stats, dict) else {}
    print(f"\n{shown} suggestions shown; server totals: requests={totals.get('requests')}"
          f" cache_hits={totals.get('cache_hits')} superseded={totals.get('superseded')}"
          f" reused_tokens={totals.get('reused_tokens')}"
          f" evaluated_tokens={totals.get('evaluated_tokens')}")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return 0


async def _wait_for_model(client: LanguageClient, timeout_s: float = 600.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        stats = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="lspCoder.stats"))
        totals = stats.get("totals", {}) if isinstance(stats, dict) else {}
        if totals.get("model_loaded"):
            return True
        if totals.get("error"):
            return False
        await asyncio.sleep(0.5)
    return False


def try_server(file: str | None, config: str | None, lines: int = 3) -> int:
    if file:
        path = Path(file).resolve()
        source = path.read_text(encoding="utf-8")
        uri = path.as_uri()
    else:
        source, uri = SAMPLE_PY, "file:///tmp/lsp-coder-sample.py"
    return asyncio.run(_run(source, uri, config, lines))
