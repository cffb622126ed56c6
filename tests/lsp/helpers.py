"""Helpers for driving the real server over stdio with pytest-lsp."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from weakref import WeakKeyDictionary

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.conftest import server_env

SERVER = [sys.executable, "-m", "lsp_coder"]

_OPEN: WeakKeyDictionary[LanguageClient, set[str]] = WeakKeyDictionary()
"""The documents each client opened and has not closed (``close_all`` closes them)."""


async def server_stats(client: LanguageClient) -> dict:
    """``lspCoder.stats``: {"totals": {...}, "recent": [...]}."""
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="lspCoder.stats"))


async def totals(client: LanguageClient) -> dict:
    """The ``totals`` of ``lspCoder.stats``."""
    return (await server_stats(client))["totals"]


def grown(before: dict, after: dict) -> dict[str, float]:
    """How much each numeric total grew between two ``totals`` (the module's server is shared,
    so a test counts only what it did)."""
    return {k: after[k] - before[k] for k, v in before.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


async def wait_for_busy(client: LanguageClient, busy: bool = True,
                        timeout_s: float = 120.0) -> None:
    """Wait until ``lspCoder.stats`` says the engine is (or is no longer) working."""
    deadline = time.monotonic() + timeout_s
    while (await totals(client))["busy"] != busy:
        assert time.monotonic() < deadline, f"the server never became {'busy' if busy else 'idle'}"
        await asyncio.sleep(0.01)


def long_document(salt: str) -> str:
    """A document whose prompt fills a 2048-token context with text no other test used, so its
    prefill keeps the engine busy (for seconds on a CPU) and nothing of it is cached."""
    body = "".join(f"def {salt}_helper_{i}(x):\n    return x * {i} + {i * 7}\n\n\n"
                   for i in range(120))
    return body + "class Stack:\n    def __init__(self):\n        "


async def reading_at_the_end(client: LanguageClient, uri: str, salt: str,
                             msg_id: str | None = None) -> tuple[str, asyncio.Future]:
    """Open a ``long_document`` of ``salt`` at ``uri`` and ask for an inline completion at its
    end (with ``msg_id``, to cancel it); returns the text and the answer's future once that
    request is reading its prompt."""
    text = long_document(salt)
    open_doc(client, uri, text)
    await wait_for_busy(client, False)
    future = asyncio.ensure_future(client.protocol.send_request_async(
        types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(uri, end_position(text)),
        msg_id=msg_id))
    await wait_for_busy(client)
    return text, future


def highlight(client: LanguageClient, uri: str, position: types.Position):
    """Ask for the highlights at ``position``: the client reports where the cursor rests."""
    return client.text_document_document_highlight_async(types.DocumentHighlightParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position))


def inline_params(uri: str, position: types.Position) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position,
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic))


async def wait_for_model(client: LanguageClient, timeout_s: float = 120.0) -> dict:
    """Poll ``lspCoder.stats`` until the model loaded or failed; returns the totals."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = await totals(client)
        ended = (now["model_loaded"] or now["error"]) and not now["loading"]
        if ended or time.monotonic() > deadline:
            return now
        await asyncio.sleep(0.1)


def open_doc(client: LanguageClient, uri: str, text: str, language: str = "python") -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1,
                                             text=text)))
    _OPEN.setdefault(client, set()).add(uri)


def close_doc(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    _OPEN.get(client, set()).discard(uri)


def close_all(client: LanguageClient) -> None:
    """Close every document ``client`` opened and left open (a test that failed midway)."""
    for uri in sorted(_OPEN.get(client, set())):
        close_doc(client, uri)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def end_position(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=utf16_len(lines[-1]))


async def inline(client: LanguageClient, uri: str, position: types.Position):
    return await client.text_document_inline_completion_async(inline_params(uri, position))


async def complete(client: LanguageClient, uri: str, position: types.Position):
    return await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position))


def insert(client: LanguageClient, uri: str, version: int, position: types.Position,
           text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=position, end=position), text=text)]))


async def start_in_folder(root: Path, model: Path, **layers) -> LanguageClient:
    """A server on ``model`` with ``root`` as its workspace folder (VS Code's capabilities),
    answering every key at once with idle work off, ``layers`` over those settings; returned
    once its model is loaded."""
    client = make_test_lsp_client()
    await client.start_io(*SERVER, env=server_env())
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri(),
        initialization_options={"model": {"path": str(model), "n_ctx": 4096},
                                "completion": {"debounce_ms": 0, "max_tokens": 4,
                                               "inline_budget_ms": 0},
                                "idle": {"enabled": False}, **layers}))
    assert (await wait_for_model(client))["model_loaded"]
    return client
