"""The real server over stdio with the embedded Qwen2.5-Coder-0.5B: inline and completion."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.helpers import (
    complete,
    end_position,
    grown,
    inline,
    insert,
    open_doc,
    totals,
    utf16_len,
    wait_for_busy,
)

pytestmark = [pytest.mark.real_model, pytest.mark.asyncio(loop_scope="module")]


async def test_inline_completion_is_sensible(client: LanguageClient):
    uri = "file:///tmp/add.py"
    text = "def add(a, b):\n    "
    open_doc(client, uri, text)
    result = await inline(client, uri, end_position(text))
    assert isinstance(result, types.InlineCompletionList)
    assert len(result.items) == 1
    item = result.items[0]
    assert "return a + b" in item.insert_text
    assert item.range == types.Range(start=end_position(text), end=end_position(text))
    assert item.command is not None and item.command.command == "lspCoder.accepted"


async def test_completion_item_replaces_word_under_cursor(client: LanguageClient):
    uri = "file:///tmp/read.py"
    text = "import os\n\ndef read_file(path):\n    with open(path) as f:\n        return f.re"
    open_doc(client, uri, text)
    pos = end_position(text)
    result = await complete(client, uri, pos)
    assert isinstance(result, types.CompletionList) and result.is_incomplete
    assert result.items, "expected a completion item"
    item = result.items[0]
    edit = item.text_edit
    assert isinstance(edit, types.TextEdit)
    assert edit.range.start == types.Position(line=4, character=pos.character - 2)
    assert edit.range.end == pos
    assert edit.new_text.startswith("re") and len(edit.new_text) > 2
    assert item.label == edit.new_text.split("\n")[0].strip()


async def test_completion_item_ranks_after_the_language_servers_items(client: LanguageClient):
    """Neither preselected nor forced first: its sortText sorts after the keys language servers
    use, so a client ordering by sortText shows their items first; it still matches the typed
    word through its filterText."""
    uri = "file:///tmp/rank.py"
    text = "import os\n\ndef read_file(path):\n    with open(path) as f:\n        return f.re"
    open_doc(client, uri, text)
    result = await complete(client, uri, end_position(text))
    assert result.items, "expected a completion item"
    item = result.items[0]
    assert not item.preselect, item
    assert item.kind == types.CompletionItemKind.Text, item
    assert item.filter_text == item.text_edit.new_text and item.filter_text.startswith("re")
    assert item.sort_text == "~" + item.label, item
    # Beside what jedi-language-server, gopls and pyright send for their own items, and an item
    # with no sortText (its label counts), ours comes last.
    theirs = [types.CompletionItem(label="read", sort_text="v00"),
              types.CompletionItem(label="readline", sort_text="z01"),
              types.CompletionItem(label="Reader", sort_text="00001"),
              types.CompletionItem(label="readlines", sort_text="09.9999.readlines"),
              types.CompletionItem(label="zzz_last_label")]
    ranked = sorted([item, *theirs], key=lambda i: i.sort_text or i.label)
    assert ranked[-1] is item, [i.label for i in ranked]


async def test_utf16_positions_with_astral_characters(client: LanguageClient):
    uri = "file:///tmp/emoji.py"
    head = 'label = "😀😀" + fo'
    text = f"{head}o_bar(1)\n"
    open_doc(client, uri, text)
    # The cursor sits between "fo" and "o_bar": UTF-16 counts each emoji as two units.
    pos = types.Position(line=0, character=utf16_len(head))
    assert pos.character == len(head) + 2
    result = await complete(client, uri, pos)
    assert result.items, "expected an item before the edit"
    edit = result.items[0].text_edit
    assert edit.range.start == types.Position(line=0, character=pos.character - 2)
    # Counted in code points, the cursor would sit two characters on, after "foo_b".
    assert edit.new_text.startswith("fo") and not edit.new_text.startswith("foo_b")
    # An incremental edit after the emoji lands where the client meant it.
    insert(client, uri, 2, pos, "rmat_")
    pos2 = types.Position(line=0, character=pos.character + 5)
    result = await complete(client, uri, pos2)
    assert result.items, "expected an item after the edit"
    edit = result.items[0].text_edit
    assert edit.range.start == types.Position(line=0, character=pos.character - 2)
    assert edit.new_text.startswith("format_")


async def test_did_change_then_inline_reuses_the_cache(client: LanguageClient):
    uri = "file:///tmp/typing.py"
    text = "def mul(a, b):\n    "
    open_doc(client, uri, text)
    await wait_for_busy(client, False)  # earlier tests' background work has ended
    before = await totals(client)
    first = await inline(client, uri, end_position(text))
    assert first.items
    version = 1
    for ch in "re":
        version += 1
        insert(client, uri, version, end_position(text), ch)
        text += ch
    result = await inline(client, uri, end_position(text))
    assert result.items, "typing along the suggestion should keep one"
    after = await totals(client)
    for key in ("requests", "cache_hits", "cancelled", "prompt_tokens", "reused_tokens",
                "evaluated_tokens", "generated_tokens", "prefill_ms", "decode_ms",
                "draft_proposed", "draft_accepted"):
        assert key in after, key
    counted = grown(before, after)
    assert counted["prompt_tokens"] == counted["reused_tokens"] + counted["evaluated_tokens"]
    assert counted["reused_tokens"] > 0
    assert counted["requests"] == 2, counted
