"""Scheduling over real stdio: supersede, cancel, typing through a suggestion."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.helpers import (
    close_all,
    close_doc,
    end_position,
    grown,
    highlight,
    inline,
    inline_params,
    insert,
    long_document,
    open_doc,
    reading_at_the_end,
    server_stats,
    totals,
    wait_for_busy,
)

pytestmark = [pytest.mark.real_model, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture(autouse=True)
def documents_closed_after(client: LanguageClient):
    """A test that fails midway leaves no document open: it would be context for the next."""
    yield
    close_all(client)


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


async def indented_suggestion(client: LanguageClient, uri: str, before: str,
                              after: str) -> str:
    """Open ``before + after`` (``before`` ends in a line begun with a space), and the
    suggestion at the end of ``before``, which must go on with indentation and then code;
    returned once the engine is idle."""
    open_doc(client, uri, before + after)
    shown = (await inline(client, uri, end_position(before))).items
    shown = shown[0].insert_text if shown else ""
    code = shown.lstrip(" ")
    if not shown.startswith("  ") or not code[:1].isalpha():
        pytest.fail(f"expected an indented line of code after a def, got {shown!r}")
    await wait_for_busy(client, False)
    return shown


def indentation_then_a_miss(shown: str) -> str:
    """After ``shown``'s first space is typed: the rest of its indentation and a letter its
    code does not start with."""
    code = shown.lstrip(" ")
    return shown[1 : len(shown) - len(code)] + ("x" if code[0] != "x" else "y")


async def test_the_first_key_of_code_after_typed_indentation_reads_what_the_confirm_read(client):
    # A line's whole levels of indentation go before the suffix in the prompt: the confirm of
    # a suggestion typed along from column 0 reads that prompt, past the suggestion's
    # indentation, so the first key of code there does not read the suffix again.
    uri = "file:///tmp/indented.py"
    before = ("import math\n\n\ndef area_of_circle(radius):\n"
              "    squared = radius * radius\n ")
    after = ("\n\n\ndef perimeter_of_circle(radius):\n    return 2 * math.pi * radius\n\n\n"
             "def volume_of_sphere(radius):\n    return 4 / 3 * math.pi * radius ** 3\n")
    shown = await indented_suggestion(client, uri, before, after)
    insert(client, uri, 2, end_position(before), " ")
    before += " "
    await inline(client, uri, end_position(before))
    assert (await recent(client))[-1]["cached"]
    await wait_for_busy(client, False)  # the confirm has read its prompt
    typed = indentation_then_a_miss(shown)
    insert(client, uri, 3, end_position(before), typed)
    before += typed
    await inline(client, uri, end_position(before))
    entry = (await recent(client))[-1]
    assert not entry["cached"] and entry["evaluated_tokens"] <= 2, entry
    close_doc(client, uri)


async def test_a_background_confirm_yields_to_a_key_the_model_answers(client):
    # The confirm that starts with a key answered from the cache reads a prompt new to the
    # cache (past the suggestion's indentation); the next key misses the suggestion and
    # arrives during that read: the confirm stops once it has read it (the key's prompt is
    # the same), and nothing it would have generated keeps the key waiting.
    uri = "file:///tmp/yields.py"
    before = ("import math\n\n\ndef area_of_square(side):\n"
              "    squared = side * side\n ")
    # A long suffix makes the confirm's read long (the window the next key must land in).
    after = "\n\n\n" + "".join(
        f"def {name}_of_cube(side):\n    return {body}\n\n\n"
        for name, body in (("perimeter", "12 * side"), ("volume", "side * side * side"),
                           ("surface", "6 * side * side"), ("diagonal", "math.sqrt(3) * side"),
                           ("face_diagonal", "math.sqrt(2) * side"),
                           ("inradius", "side / 2"), ("circumradius", "math.sqrt(3) * side / 2"),
                           ("midradius", "math.sqrt(2) * side / 2")))
    shown = await indented_suggestion(client, uri, before, after)
    before_totals = await totals(client)
    insert(client, uri, 2, end_position(before), " ")
    before += " "
    await inline(client, uri, end_position(before))  # the confirm starts before this answer
    typed = indentation_then_a_miss(shown)
    insert(client, uri, 3, end_position(before), typed)
    before += typed
    await inline(client, uri, end_position(before))
    entry = (await recent(client))[-1]
    await wait_for_busy(client, False)
    counted = grown(before_totals, await totals(client))
    assert not entry["cached"] and counted["background"] == 1, counted
    assert counted["generated_tokens"] == entry["generated_tokens"], (counted, entry)
    assert entry["evaluated_tokens"] <= 2, entry


async def test_a_burst_while_the_engine_is_busy_supersedes_all_but_the_newest(client):
    # Another document's long prefill holds the engine, so every request of the burst is still
    # waiting when the next one arrives.
    blocker_uri = "file:///tmp/blocker.py"
    blocker_text = long_document("burst")
    open_doc(client, blocker_uri, blocker_text)
    await wait_for_busy(client, False)
    before = await totals(client)
    blocker = asyncio.ensure_future(inline(client, blocker_uri, end_position(blocker_text)))
    await wait_for_busy(client)
    uri = "file:///tmp/burst.py"
    text = "import math\n\n\ndef hypotenuse(a, b):\n    "
    open_doc(client, uri, text)
    typed = "return math.sqrt(a * a + b"
    answers = []
    for version, ch in enumerate(typed[:20], start=2):
        insert(client, uri, version, end_position(text), ch)
        text += ch
        # Sent now, before the next change: the call writes the request and returns a future.
        answers.append(client.text_document_inline_completion_async(
            inline_params(uri, end_position(text))))
    results = await asyncio.wait_for(asyncio.gather(*answers), timeout=600)
    assert all(isinstance(r, types.InlineCompletionList) for r in results)
    assert [bool(r.items) for r in results] == [False] * 19 + [True]
    assert (await blocker).items is not None
    counted = grown(before, await totals(client))
    assert (counted["requests"], counted["superseded"]) == (21, 19), counted
    close_doc(client, uri)
    close_doc(client, blocker_uri)


async def test_a_request_superseded_in_its_read_leaves_the_read_to_the_next(client):
    # A client that does not cancel its stale requests: the next key's request supersedes
    # one still reading its prompt; that read goes on to its end and stays cached, so the new
    # request reads only what the key added.
    uri = "file:///tmp/superseded_read.py"
    text, first = await reading_at_the_end(client, uri, "superseded")
    insert(client, uri, 2, end_position(text), "x")
    text += "x"
    second = await inline(client, uri, end_position(text))
    assert not (await first).items
    assert isinstance(second, types.InlineCompletionList)
    entry = (await recent(client))[-1]
    assert not entry["cached"] and entry["evaluated_tokens"] <= 3, entry
    close_doc(client, uri)


async def test_a_request_far_from_a_superseded_read_stops_it(client):
    # The cursor jumped to the top of the document while the request at its end still reads
    # its prompt: the new prompt shares little of that read, so the read stops at once and
    # what it had not read yet is read again when the cursor comes back.
    uri = "file:///tmp/jump_read.py"
    text, first = await reading_at_the_end(client, uri, "jump")
    top = types.Position(line=1, character=4)
    jumped = await inline(client, uri, top)
    assert not (await first).items
    assert isinstance(jumped, types.InlineCompletionList)
    await wait_for_busy(client, False)
    await inline(client, uri, end_position(text))
    entry = (await recent(client))[-1]
    assert not entry["cached"] and entry["evaluated_tokens"] > 100, entry
    close_doc(client, uri)


async def test_cancel_request_is_honoured_and_answered(client):
    uri = "file:///tmp/cancel.py"
    before = await totals(client)
    text, future = await reading_at_the_end(client, uri, "cancel", msg_id="cancel-me")
    assert not future.done()
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="cancel-me"))
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(future, timeout=60)
    assert raised.value.code == -32800  # RequestCancelled
    assert grown(before, await totals(client))["cancelled"] == 1
    # The cancelled request read its prompt to the end (an editor cancels at the next key,
    # whose request shares it), and the server goes on answering from it.
    result = await inline(client, uri, end_position(text))
    assert isinstance(result, types.InlineCompletionList) and result.items
    entry = (await recent(client))[-1]
    assert not entry["cached"] and entry["evaluated_tokens"] <= 2, entry
    close_doc(client, uri)


async def test_a_cancelled_read_stops_when_the_cursor_rests_far_from_it(client):
    # The editor cancelled the request and reports the cursor at the top of the document:
    # nothing there shares the read, so it stops instead of holding the worker to its end.
    uri = "file:///tmp/cancel_jump.py"
    text, future = await reading_at_the_end(client, uri, "moved", msg_id="cancel-then-move")
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="cancel-then-move"))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(future, timeout=60)
    await highlight(client, uri, types.Position(line=1, character=4))
    await wait_for_busy(client, False)
    await inline(client, uri, end_position(text))
    entry = (await recent(client))[-1]
    assert not entry["cached"] and entry["evaluated_tokens"] > 100, entry
    close_doc(client, uri)


async def test_a_typed_through_suggestion_is_confirmed_from_the_greedy_memory(client):
    uri = "file:///tmp/memory.py"
    text = "def area_of_square(side):\n    "
    open_doc(client, uri, text)
    shown = (await inline(client, uri, end_position(text))).items[0].insert_text
    assert len(shown) > 2
    await wait_for_busy(client, False)
    before = await totals(client)
    insert(client, uri, 2, end_position(text), shown[0])
    text += shown[0]
    result = await inline(client, uri, end_position(text))
    assert result.items[0].insert_text == shown[1:]
    # The cached answer started the confirm before it was sent: wait for it to end.
    await wait_for_busy(client, False)
    counted = grown(before, await totals(client))
    assert counted["background"] == 1, counted
    # The model's own picks after this context were remembered: no verification batch.
    assert counted["known_tokens"] > 0 and counted["decode_steps"] == 0, counted
    close_doc(client, uri)
