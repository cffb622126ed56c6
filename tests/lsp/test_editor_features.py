"""What an editor's status display, trigger key and "next suggestion" use, over real stdio.

``lspCoder/status`` notifications (loading, ready, a serving engine unreachable), a request the
user invoked skipping the debounce, and the alternatives such a request gets (never one typed).
"""

from __future__ import annotations

import asyncio
import socket
import time

import attrs
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.conftest import server_env
from tests.lsp.helpers import SERVER, end_position, open_doc, server_stats, wait_for_model

STATUS = "lspCoder/status"
TEXT = "import os\n\n\ndef read_config(path):\n    "


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def start(options: dict, *, status: bool = True) -> tuple[LanguageClient, list[dict]]:
    """A client of the real server; with ``status`` it asks for ``lspCoder/status``.

    Returns the client and the list the notifications it receives are appended to.
    """
    client = make_test_lsp_client()
    received: list[dict] = []

    @client.feature(STATUS)
    def on_status(params) -> None:
        received.append(params if isinstance(params, dict) else attrs.asdict(params)
                        if attrs.has(type(params)) else dict(params._asdict()))

    await client.start_io(*SERVER, env=server_env())
    capabilities = client_capabilities("visual-studio-code")
    if status:
        capabilities = attrs.evolve(capabilities, experimental={"lspCoderStatus": True})
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities, initialization_options=options))
    return client, received


async def stop(client: LanguageClient) -> None:
    await client.shutdown_session()
    await client.stop()


async def wait_for_state(received: list[dict], state: str, timeout_s: float = 60.0) -> dict:
    """The first ``lspCoder/status`` notification with ``state`` (waits for it)."""
    deadline = time.monotonic() + timeout_s
    while True:
        for status in received:
            if status["state"] == state:
                return status
        assert time.monotonic() < deadline, f"no {state!r} status; got {received}"
        await asyncio.sleep(0.05)


def inline_request(uri: str, text: str, kind: types.InlineCompletionTriggerKind):
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=end_position(text),
        context=types.InlineCompletionContext(trigger_kind=kind))


def local_options(model, **completion) -> dict:
    return {"model": {"path": str(model), "draft_path": "none", "n_ctx": 1024},
            "completion": {"max_tokens": 12, "inline_budget_ms": 0, **completion}}


async def test_status_goes_from_loading_to_ready_and_the_command_agrees(tiny_qwen):
    client, received = await start(local_options(tiny_qwen))
    try:
        await wait_for_state(received, "ready")
        assert received[0]["state"] == "loading", received
        last = dict(received[-1])
        assert isinstance(last.pop("shared"), bool), received[-1]
        assert last == {"state": "ready", "message": "", "backend": "local", "url": "",
                        "editors": 1}
        now = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="lspCoder.status"))
        assert now["state"] == "ready" and now["backend"] == "local", now
    finally:
        await stop(client)


async def test_no_status_notifications_unless_the_client_asks(tiny_qwen):
    client, received = await start(local_options(tiny_qwen), status=False)
    try:
        assert (await wait_for_model(client))["model_loaded"]
        uri = "file:///tmp/quiet.py"
        open_doc(client, uri, TEXT)
        await client.text_document_inline_completion_async(
            inline_request(uri, TEXT, types.InlineCompletionTriggerKind.Automatic))
        assert received == []
    finally:
        await stop(client)


async def test_an_engine_that_does_not_answer_is_reported_unreachable():
    url = f"http://127.0.0.1:{free_port()}"
    client, received = await start({"backend": {"kind": "llama-server", "url": url},
                                    "completion": {"debounce_ms": 0}})
    try:
        ready = await wait_for_state(received, "ready")
        assert ready["backend"] == "llama-server" and ready["url"] == url, ready
        uri = "file:///tmp/remote.py"
        open_doc(client, uri, TEXT)
        result = await client.text_document_inline_completion_async(
            inline_request(uri, TEXT, types.InlineCompletionTriggerKind.Automatic))
        assert result is not None and not result.items
        down = await wait_for_state(received, "unreachable")
        assert url in down["message"] and "not reachable" in down["message"], down
    finally:
        await stop(client)


async def typed_then_asked(options: dict, uri: str):
    """A server with ``options``; in document ``uri`` (``TEXT``) a request as typed, then
    one the user invoked: (the typed answer, its stats entry, the invoked answer, the stats
    after it)."""
    client, _received = await start(options)
    try:
        assert (await wait_for_model(client))["model_loaded"]
        open_doc(client, uri, TEXT)
        typed = await client.text_document_inline_completion_async(
            inline_request(uri, TEXT, types.InlineCompletionTriggerKind.Automatic))
        typed_entry = (await server_stats(client))["recent"][-1]
        asked = await client.text_document_inline_completion_async(
            inline_request(uri, TEXT, types.InlineCompletionTriggerKind.Invoked))
        return typed, typed_entry, asked, await server_stats(client)
    finally:
        await stop(client)


async def test_an_invoked_request_skips_the_debounce_and_gets_alternatives(tiny_qwen):
    # NOTE: above the 1 s the server assumes between requests before it has seen two, so
    # the typed request waits.
    typed, typed_entry, asked, stats = await typed_then_asked(
        local_options(tiny_qwen, debounce_ms=1500, alternatives=4), "file:///tmp/invoked.py")
    asked_entry = stats["recent"][-1]
    # Typing: the debounce, one suggestion, no sampling.
    assert not typed_entry["invoked"] and typed_entry["debounce_ms"] > 0, typed_entry
    assert len(typed.items) <= 1 and typed_entry["alternatives"] == 0, typed_entry
    # Asked for: no wait, the greedy suggestion first, then distinct sampled ones.
    assert asked_entry["invoked"] and asked_entry["debounce_ms"] == 0, asked_entry
    texts = [item.insert_text for item in asked.items]
    assert len(texts) >= 2 and len(set(texts)) == len(texts), texts
    assert asked_entry["alternatives"] == len(texts) - 1, asked_entry
    if typed.items:
        assert texts[0] == typed.items[0].insert_text  # greedy both times
    # Sampled from the prompt the first suggestion left in the cache, not read again.
    assert asked_entry["alternatives_evaluated_tokens"] <= 2 * asked_entry["alternatives"], (
        asked_entry)
    assert asked_entry["prompt_tokens"] > 10, asked_entry


async def test_an_unsure_answer_is_hidden_from_typing_and_shown_when_asked_for(tiny_qwen):
    # min_confidence 1.0: every answer is unsure (no token has probability 1).
    typed, typed_entry, asked, stats = await typed_then_asked(
        local_options(tiny_qwen, debounce_ms=0, alternatives=0, min_confidence=1.0),
        "file:///tmp/unsure.py")
    assert not typed.items and typed_entry["outcome"] == "unsure", typed_entry
    assert 0 < max(typed_entry["token_probs"]) < 1, typed_entry
    assert [item.insert_text for item in asked.items] and stats["recent"][-1]["outcome"] == "ok"
    assert stats["totals"]["unsure"] == 1, stats["totals"]
