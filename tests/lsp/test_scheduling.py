"""Scheduling over real stdio: supersede, cancel, typing through a suggestion."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.helpers import close_doc, end_position, inline, insert, open_doc, server_stats

pytestmark = [pytest.mark.real_model, pytest.mark.asyncio(loop_scope="module")]


async def recent(client: LanguageClient) -> list[dict]:
    return (await server_stats(client))["recent"]


async def test_typing_three_characters_of_a_suggestion_is_served_from_cache(client):
    uri = "file:///tmp/through.py"
    text = "def area_of_circle(radius):\n    "
    open_doc(client, uri, text)
    shown = (await inline(client, uri, end_position(text))).items[0].insert_text
    assert len(shown) > 3
    version = 1
    for typed in range(1, 4):
        version += 1
        insert(client, uri, version, end_position(text), shown[typed - 1])
        text += shown[typed - 1]
        result = await inline(client, uri, end_position(text))
        entry = (await recent(client))[-1]
        assert entry["cached"], entry
        assert result.items[0].insert_text == shown[typed:]
    close_doc(client, uri)  # a half-typed line would otherwise be context for the next test


async def test_typing_through_across_a_newline(client):
    uri = "file:///tmp/newline.py"
    text = "def fibonacci(n):\n    "
    open_doc(client, uri, text)
    shown = (await inline(client, uri, end_position(text))).items[0].insert_text
    if "\n" not in shown:
        pytest.fail(f"expected a multi-line suggestion after a block opener, got {shown!r}")
    head = shown[: shown.index("\n") + 1]
    version = 1
    for ch in head:
        version += 1
        insert(client, uri, version, end_position(text), ch)
        text += ch
    result = await inline(client, uri, end_position(text))
    assert (await recent(client))[-1]["cached"]
    # The rest, cut where it leaves the block the cursor is now in.
    rest = result.items[0].insert_text
    assert rest and shown[len(head):].startswith(rest), (shown, rest)


async def test_twenty_unawaited_requests_are_all_answered_and_the_last_is_not_empty(client):
    uri = "file:///tmp/burst.py"
    text = "import math\n\n\ndef hypotenuse(a, b):\n    "
    open_doc(client, uri, text)
    typed = "return math.sqrt(a * a + b"
    tasks = []
    version = 1
    for ch in typed[:20]:
        version += 1
        insert(client, uri, version, end_position(text), ch)
        text += ch
        tasks.append(asyncio.ensure_future(inline(client, uri, end_position(text))))
        await asyncio.sleep(0.01)
    results = await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
    assert len(results) == 20
    assert all(isinstance(r, types.InlineCompletionList) for r in results)
    assert results[-1].items, "the newest request must get a suggestion"
    outcomes = [e["outcome"] for e in (await recent(client))[-20:]]
    assert outcomes.count("superseded") >= 1


async def test_cancel_request_is_honoured_and_answered(client):
    uri = "file:///tmp/cancel.py"
    # A long document, so the request is still in its prefill when the cancel arrives.
    body = "".join(f"def helper_{i}(x):\n    return x * {i} + {i * 7}\n\n\n" for i in range(120))
    text = body + "class Stack:\n    def __init__(self):\n        "
    open_doc(client, uri, text)
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=end_position(text),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Invoked))
    future = asyncio.ensure_future(client.protocol.send_request_async(
        types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id="cancel-me"))
    await asyncio.sleep(0.05)
    assert not future.done()
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="cancel-me"))
    try:
        result = await asyncio.wait_for(future, timeout=60)
        assert result is None or not result.items or isinstance(result,
                                                                types.InlineCompletionList)
    except JsonRpcException as exc:
        assert exc.code == -32800  # RequestCancelled
    # The server goes on answering.
    assert (await inline(client, uri, end_position(text))).items is not None
    assert (await totals(client))["cancelled"] >= 1


async def totals(client: LanguageClient) -> dict:
    return (await server_stats(client))["totals"]


async def test_a_typed_through_suggestion_is_confirmed_from_the_greedy_memory(client):
    uri = "file:///tmp/memory.py"
    text = "def area_of_square(side):\n    "
    open_doc(client, uri, text)
    shown = (await inline(client, uri, end_position(text))).items[0].insert_text
    assert len(shown) > 2
    while (await totals(client))["busy"]:
        await asyncio.sleep(0.05)
    before = await totals(client)
    insert(client, uri, 2, end_position(text), shown[0])
    text += shown[0]
    result = await inline(client, uri, end_position(text))
    assert result.items[0].insert_text == shown[1:]
    for _ in range(600):  # the confirm runs in the background
        after = await totals(client)
        if not after["busy"] and after["background"] > before["background"]:
            break
        await asyncio.sleep(0.05)
    # The model's own picks after this context were remembered: no verification batch.
    assert after["known_tokens"] > before["known_tokens"], (before, after)
    assert after["decode_steps"] == before["decode_steps"], (before, after)
    close_doc(client, uri)
