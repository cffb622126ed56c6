"""Idle-time prefill over real stdio with a tiny model: preemption, taken branches, off switch."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from lsp_coder.completion.next_prompts import document_window
from tests.conftest import server_env
from tests.lsp.helpers import (
    SERVER,
    close_doc,
    end_position,
    highlight,
    inline,
    insert,
    open_doc,
    server_stats,
    wait_for_model,
)

pytestmark = pytest.mark.asyncio


async def start(tiny_qwen, idle: dict, completion: dict | None = None,
                speculative: bool = True, model: dict | None = None) -> LanguageClient:
    client = make_test_lsp_client()
    await client.start_io(*SERVER, env=server_env())
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={
            "model": {"path": str(tiny_qwen), "n_ctx": 4096, "n_ubatch": 32, "n_batch": 32,
                      "n_threads": 1, **(model or {})},
            # min_confidence 0: a random model is sure of nothing, and these tests follow
            # its answers into the caches
            "completion": {"debounce_ms": 0, "max_tokens": 6, "inline_budget_ms": 0,
                           "min_confidence": 0.0, **(completion or {})},
            "idle": {"start_after_ms": 0, "chunk_tokens": 8, **idle},
            "speculative": {"enabled": speculative},
        }))
    assert (await wait_for_model(client))["model_loaded"]
    return client


async def stop(client: LanguageClient) -> None:
    await client.shutdown_session()
    await client.stop()


async def idle_totals(client: LanguageClient) -> dict:
    return (await server_stats(client))["totals"]


async def until_idle_done(client: LanguageClient, jobs: int) -> dict:
    """Wait until at least ``jobs`` idle jobs finished and none runs or waits."""
    for _ in range(2400):
        totals = await idle_totals(client)
        if (totals["idle"]["jobs"] >= jobs and not totals["idle_running"]
                and not totals["idle_queued"]):
            return totals
        await asyncio.sleep(0.025)
    raise AssertionError(f"idle work did not finish: {totals}")


BODY = "".join(f"def helper_{i}(value):\n    return value * {i} + {i * 7}\n\n\n"
               for i in range(60))


async def test_a_taken_enter_branch_evaluates_only_the_last_token(tiny_qwen):
    client = await start(tiny_qwen, {"prefetch": False})
    try:
        uri = "file:///tmp/enter.py"
        # Enter moves the finished line above the text below the cursor, which is evaluated
        # again (so with completion.recent_lines = 8 too: the line is the last of a group of 8).
        text = (BODY + "class Stack:\n" + "".join(f"    size_{i} = {i}\n" for i in range(6))
                + "    def push(self, item):")
        assert text.count("\n") % 8 == 7
        open_doc(client, uri, text)
        await inline(client, uri, end_position(text))
        before = await until_idle_done(client, 2)
        assert before["idle"]["kinds"]["enter"]["evaluated_tokens"] > 0
        insert(client, uri, 2, end_position(text), "\n        ")
        text += "\n        "
        await inline(client, uri, end_position(text))
        entry = (await server_stats(client))["recent"][-1]
        assert not entry["cached"]
        assert entry["evaluated_tokens"] == 1, entry
        assert (await idle_totals(client))["idle_used_tokens"] > 0
    finally:
        await stop(client)


async def test_a_request_during_idle_prefill_starts_within_one_ubatch(tiny_qwen):
    client = await start(tiny_qwen, {"prefetch": False})
    try:
        uri = "file:///tmp/other.py"
        open_doc(client, uri, "x = 1\n")
        # Its own idle job first: a stop that lands on it (a token or two) would be counted
        # as a preemption of a job that then finishes.
        await until_idle_done(client, 0)
        for attempt in range(20):
            big = f"file:///tmp/big{attempt}.py"
            # A long file: its window prefill takes many ubatches of 32 tokens on 1 thread.
            open_doc(client, big, f"# {attempt}\n" + BODY * 2)
            for _ in range(400):
                if (await idle_totals(client))["idle_running"]:
                    break
                await asyncio.sleep(0.005)
            result = await inline(client, uri, types.Position(line=1, character=0))
            assert isinstance(result, types.InlineCompletionList)
            idle = (await idle_totals(client))["idle"]
            if idle["outcomes"].get("cancelled"):  # a stop on a job's last ubatch lets it finish
                break
        assert idle["preempted"] >= 1, idle
        assert idle["preempt_wait_ubatches_max"] <= 1, idle
        assert idle["outcomes"].get("cancelled", 0) >= 1, idle
    finally:
        await stop(client)


async def answer_then_enter(client: LanguageClient, uri: str, text: str, indent: str,
                            idle_work: bool) -> tuple:
    """Open ``text`` and ask at its end; let idle work finish; press Enter (with the editor's
    ``indent``) and ask again. Returns both answers and the totals after idle work."""
    open_doc(client, uri, text)
    first = await inline(client, uri, end_position(text))
    totals = await until_idle_done(client, 2) if idle_work else await idle_totals(client)
    insert(client, uri, 2, end_position(text), "\n" + indent)
    second = await inline(client, uri, end_position(text + "\n" + indent))
    return first, second, totals


async def test_idle_off_does_no_idle_work_and_answers_the_same(tiny_qwen):
    answers = {}
    for enabled in (True, False):
        client = await start(tiny_qwen, {"enabled": enabled})
        try:
            uri = "file:///tmp/same.py"
            first, second, _ = await answer_then_enter(
                client, uri, BODY + "def total(items):", "    ", idle_work=enabled)
            totals = await idle_totals(client)
            answers[enabled] = [[i.insert_text for i in r.items] for r in (first, second)]
            if not enabled:
                assert totals["idle"]["jobs"] == 0 and totals["idle_used_tokens"] == 0
            close_doc(client, uri)
        finally:
            await stop(client)
    assert answers[True] == answers[False]


async def enter_with_and_without_prefetch(tiny_qwen, completion: dict | None = None) -> dict:
    """Per ``idle.prefetch`` setting: the answer after Enter (once idle work is done), the
    stats entry of that request and the totals after idle work."""
    runs = {}
    for prefetch in (True, False):
        client = await start(tiny_qwen, {"prefetch": prefetch}, completion)
        try:
            _, after_enter, totals = await answer_then_enter(
                client, "file:///tmp/prefetch.py", BODY + "class Queue:\n    def put(self, item):",
                "        ", idle_work=True)
            entry = (await server_stats(client))["recent"][-1]
            runs[prefetch] = ([i.insert_text for i in after_enter.items], entry, totals)
        finally:
            await stop(client)
    return runs


async def test_a_prefetched_enter_branch_is_answered_from_the_cache_with_the_same_text(tiny_qwen):
    runs = await enter_with_and_without_prefetch(tiny_qwen)
    for prefetch, (_, entry, _) in runs.items():
        assert entry["cached"] is prefetch, entry
    assert runs[True][2]["idle"]["prefetched"] >= 1, runs[True][2]["idle"]
    assert runs[True][0] == runs[False][0] and runs[True][0]


async def test_a_finished_prefetch_with_nothing_to_show_answers_its_state(tiny_qwen):
    # With recent lines the cursor line's indentation goes after the middle token and is
    # healed, so one token of the tiny model after Enter is blank (without them it is " Mia"):
    # nothing to show, and the suggestion cache keeps no empty answer. The request takes the
    # finished prefetch's (empty) answer instead of generating it again.
    runs = await enter_with_and_without_prefetch(tiny_qwen, {"max_tokens": 1, "recent_lines": 8})
    for prefetch, (_, entry, _) in runs.items():
        assert entry["prefetch_taken"] is prefetch and not entry["cached"], entry
    assert runs[True][0] == runs[False][0] == []


async def test_a_request_for_the_state_being_prefetched_takes_the_prefetch_answer(tiny_qwen):
    def text_of(attempt: int) -> str:
        return f"# {attempt}\n" + BODY + "class Queue:\n    def put(self, item):"

    # Enter is sent as soon as the first answer is back, while the Enter branch is prefilled
    # and its suggestion generated (start_after_ms 0); a few tries catch the generation running.
    client = await start(tiny_qwen, {"prefetch": True},
                         {"max_tokens": 64, "max_lines": 8}, speculative=False)
    try:
        for attempt in range(20):
            uri = f"file:///tmp/ahead{attempt}.py"
            _, taken, _ = await answer_then_enter(client, uri, text_of(attempt), "        ",
                                                  idle_work=False)
            entry = (await server_stats(client))["recent"][-1]
            if entry["prefetch_taken"]:
                break
        assert entry["prefetch_taken"] and not entry["cached"], entry
        assert (await idle_totals(client))["prefetches_taken"] >= 1
    finally:
        await stop(client)
    client = await start(tiny_qwen, {"enabled": False},
                         {"max_tokens": 64, "max_lines": 8}, speculative=False)
    try:
        _, fresh, _ = await answer_then_enter(client, "file:///tmp/fresh.py", text_of(attempt),
                                              "        ", idle_work=False)
    finally:
        await stop(client)
    assert [i.insert_text for i in taken.items] == [i.insert_text for i in fresh.items]


async def test_a_cold_document_gets_a_short_prompt_first_and_idle_work_fills_the_full_one(
        tiny_qwen):
    # 20 ms: the tiny model (about 0.6 ms a token here) cannot read the cold ~1,000-token
    # prompt in that time, but reads a few new tokens well within it.
    client = await start(tiny_qwen, {"prefetch": False, "window": False,
                                     "cold_prompt_ms": 20, "cold_prompt_tokens": 96})
    try:
        uri = "file:///tmp/cold.py"
        text = BODY + "total = helper_3("
        open_doc(client, uri, text)
        shown = await inline(client, uri, end_position(text))
        first = (await server_stats(client))["recent"][-1]
        assert first["short_prompt"] and first["prompt_tokens"] <= 96 + 4, first
        # Enter and accept prefill the prompts a request would read (short ones, the cache is
        # still cold); "full" then fills the full prompt.
        assert shown.items and shown.items[0].insert_text
        totals = await until_idle_done(client, 3)
        assert "full" in totals["idle"]["kinds"], totals["idle"]
        assert totals["idle"]["evaluated_tokens"] > 500, totals["idle"]
        insert(client, uri, 2, end_position(text), "7")
        await inline(client, uri, end_position(text + "7"))
        second = (await server_stats(client))["recent"][-1]
        assert not second["cached"] and not second["short_prompt"], second
        assert second["prompt_tokens"] > 500 and second["evaluated_tokens"] <= 4, second
        assert (await idle_totals(client))["short_prompts"] == 1
    finally:
        await stop(client)


async def test_without_idle_work_or_cold_prompt_tokens_the_full_prompt_is_read(tiny_qwen):
    for idle in ({"enabled": False, "cold_prompt_ms": 20},
                 {"cold_prompt_ms": 20, "cold_prompt_tokens": 0}):
        client = await start(tiny_qwen, idle)
        try:
            uri = "file:///tmp/full.py"
            text = BODY + "total = helper_3("
            open_doc(client, uri, text)
            await inline(client, uri, end_position(text))
            entry = (await server_stats(client))["recent"][-1]
            assert not entry["short_prompt"] and entry["prompt_tokens"] > 500, (idle, entry)
        finally:
            await stop(client)


async def test_a_reported_cursor_prefills_the_prompt_a_request_there_reads(tiny_qwen):
    short_first = {"cold_prompt_ms": 20, "cold_prompt_tokens": 96, "cursor_prompt": "request"}
    front_first = {**short_first, "cursor_prompt": "front"}
    for cold in ({}, short_first, front_first, {**short_first, "cursor_prompt": "full"}):
        client = await start(tiny_qwen, {"prefetch": False, "window": False, **cold})
        try:
            uri = "file:///tmp/cursor.py"
            open_doc(client, uri, BODY)
            # The cursor rests inside the document, on `value` (line 121: "    return value...").
            cursor = types.Position(line=121, character=len("    return val"))
            highlights = await highlight(client, uri, cursor)
            lines = [h.range.start.line for h in highlights]
            assert len(lines) == 120 and 121 in lines, lines  # `value` twice in each helper
            assert all(h.range.end.character - h.range.start.character == len("value")
                       for h in highlights)
            short_then_full = cold in (short_first, front_first)
            totals = await until_idle_done(client, 2 if short_then_full else 1)
            kinds = totals["idle"]["kinds"]
            assert kinds["cursor"]["evaluated_tokens"] > 0, totals["idle"]
            if short_then_full:  # the short prompt, then the full one at the same cursor
                # (with "front" the short prompt starts with the full one's front, which
                # holds no more than the file's first tokens here)
                assert kinds["cursor"]["evaluated_tokens"] <= 96 + 8, totals["idle"]
                assert kinds["full"]["evaluated_tokens"] > 500, totals["idle"]
            else:  # the full prompt at once (idle.cursor_prompt "full", or a warm cache's)
                assert kinds["cursor"]["evaluated_tokens"] > 500, totals["idle"]
                assert "full" not in kinds, totals["idle"]
            await inline(client, uri, cursor)
            entry = (await server_stats(client))["recent"][-1]
            assert not entry["cached"] and entry["evaluated_tokens"] <= 1, (cold, entry)
            assert not entry["short_prompt"] and entry["prompt_tokens"] > 500, (cold, entry)
        finally:
            await stop(client)


async def test_a_reported_cursor_takes_the_least_recently_used_documents_room(tiny_qwen):
    # Three sequences, three documents asked in (each its only copy): a cursor reported in a
    # fourth document is prefilled in the first one's room. The Enter branch of the file
    # just left, planned before the cursor came, runs after it and must not take it back.
    client = await start(tiny_qwen, {"prefetch": False, "window": False, "start_after_ms": 500},
                         model={"n_seq_max": 3})
    try:
        line = BODY.splitlines()[121]
        cursor = types.Position(line=121, character=len(line))
        for name in ("a", "b", "c"):
            uri = f"file:///tmp/room_{name}.py"
            open_doc(client, uri, BODY.replace("helper", f"{name}_helper"))
            await inline(client, uri, cursor)
            if name != "c":
                await until_idle_done(client, 0)
        uri = "file:///tmp/room_d.py"
        open_doc(client, uri, BODY.replace("helper", "d_helper"))
        await highlight(client, uri, cursor)
        totals = await until_idle_done(client, 1)
        kinds = totals["idle"]["kinds"]
        assert kinds["cursor"]["evaluated_tokens"] > 0, totals["idle"]
        await inline(client, uri, cursor)
        entry = (await server_stats(client))["recent"][-1]
        assert not entry["cached"] and entry["evaluated_tokens"] <= 1, entry
    finally:
        await stop(client)


async def test_the_full_prompt_after_a_cursors_short_one_takes_another_documents_room(
        tiny_qwen):
    # Three documents asked in with idle work off fill the three sequences. A cursor reported
    # in a fourth, cold, document: its short prompt takes the first one's room, then the full
    # prompt at the cursor the second one's (both are the file the user is in), and a
    # request there reads the full prompt.
    client = await start(tiny_qwen, {"enabled": False}, model={"n_seq_max": 3})
    try:
        cursor = types.Position(line=121, character=len("    return val"))
        for name in ("a", "b", "c"):
            uri = f"file:///tmp/full_room_{name}.py"
            open_doc(client, uri, BODY.replace("helper", f"{name}_helper"))
            await inline(client, uri, cursor)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"idle": {"enabled": True, "prefetch": False, "window": False,
                               "cold_prompt_ms": 20, "cold_prompt_tokens": 96,
                               "cursor_prompt": "request"}}))
        await idle_totals(client)  # the settings apply (a task) before the next message
        uri = "file:///tmp/full_room_d.py"
        open_doc(client, uri, BODY.replace("helper", "d_helper"))
        await highlight(client, uri, cursor)
        totals = (await until_idle_done(client, 2))["idle"]
        assert totals["outcomes"] == {"done": 2}, totals
        assert set(totals["kinds"]) == {"cursor", "full"}, totals
        await inline(client, uri, cursor)
        entry = (await server_stats(client))["recent"][-1]
        assert not entry["cached"] and not entry["short_prompt"], entry
        assert entry["evaluated_tokens"] <= 1, entry
    finally:
        await stop(client)


async def test_only_the_file_opened_last_takes_another_documents_room(tiny_qwen):
    # Three documents asked in with idle work off fill the three sequences (no branches).
    # Two files then opened at once (as an editor restoring a session does): the first
    # window finds no room, only the second, where the user is, takes the least recently
    # used document's sequence.
    client = await start(tiny_qwen, {"enabled": False}, model={"n_seq_max": 3},
                         completion={"prefix_tokens": 384, "suffix_tokens": 64})
    try:
        for name in ("a", "b", "c"):
            uri = f"file:///tmp/focus_{name}.py"
            open_doc(client, uri, BODY.replace("helper", f"{name}_helper"))
            await inline(client, uri, types.Position(line=121, character=4))
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"idle": {"enabled": True, "prefetch": False, "start_after_ms": 300}}))
        await idle_totals(client)  # the settings apply (a task) before the next message
        for name in ("d", "e"):
            open_doc(client, f"file:///tmp/focus_{name}.py",
                     BODY.replace("helper", f"{name}_helper"))
        totals = (await until_idle_done(client, 2))["idle"]
        assert totals["outcomes"] == {"no_room": 1, "done": 1}, totals
        # A request where the window's prompt ends reads everything the window prefilled.
        text = BODY.replace("helper", "e_helper")
        window = document_window("file:///tmp/focus_e.py", "/tmp/focus_e.py", text, 384)
        line = text.count("\n", 0, window.offset)
        await inline(client, "file:///tmp/focus_e.py", types.Position(line=line, character=0))
        entry = (await server_stats(client))["recent"][-1]
        reused = entry["prompt_tokens"] - entry["evaluated_tokens"]
        prefilled = totals["kinds"]["window"]["evaluated_tokens"]
        assert not entry["cached"] and prefilled > 0 and reused >= prefilled, (prefilled, entry)
    finally:
        await stop(client)


async def test_highlights_answer_bad_positions_and_closed_documents(tiny_qwen):
    client = await start(tiny_qwen, {"enabled": False})
    try:
        uri = "file:///tmp/hl.py"
        open_doc(client, uri, "x = 1\n")
        assert list(await highlight(client, uri, types.Position(line=40, character=99))) == []
        assert await highlight(client, "file:///tmp/not-open.py",
                               types.Position(line=0, character=0)) is None
        assert (await idle_totals(client))["idle"]["jobs"] == 0
    finally:
        await stop(client)
