"""Recent edits over real stdio: a rename typed in one document reaches the prompt of the next
one, keys typed on a line keep the prompt cached, and a storm of big edits is answered."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.helpers import (
    end_position,
    inline,
    insert,
    open_doc,
    server_stats,
    start_in_folder,
)

CORE = ("import os\n\n\ndef load_config(path, strict=False):\n    with open(path) as f:\n"
        "        return f.read()\n\n\ndef save_config(path, text):\n    with open(path, 'w')"
        " as f:\n        f.write(text)\n")
APP = "from pkg import core\n\n\ndef main():\n    settings = "


def _rename(client: LanguageClient, uri: str) -> None:
    """Type ``_v2`` after ``def load_config``, a key a notification."""
    at = CORE.index("def load_config") + len("def load_config")
    line = CORE.count("\n", 0, at)
    column = at - CORE.rindex("\n", 0, at) - 1
    for i, char in enumerate("_v2"):
        insert(client, uri, 2 + i, types.Position(line=line, character=column + i), char)


async def _after_rename(root: Path, model: Path, recent_edits: bool) -> list[dict]:
    """The stats of requests in app.py after core.py's rename: at the end, then after each of
    four keys typed on its line."""
    client = await start_in_folder(root, model, context={
        "workspace": False, "definitions": False, "open_files": False,
        "recent_edits": recent_edits})
    try:
        core, app = (root / "pkg" / "core.py").as_uri(), (root / "pkg" / "app.py").as_uri()
        open_doc(client, core, CORE)
        _rename(client, core)
        open_doc(client, app, APP)
        text, seen = APP, []
        for version, char in enumerate(["", "x", "q", "z", "j"], start=1):
            if char:
                insert(client, app, version, end_position(text), char)
                text += char
            result = await inline(client, app, end_position(text))
            assert isinstance(result, types.InlineCompletionList)
            seen.append((await server_stats(client))["recent"][-1])
        errors = [m for m in client.messages if m.type == types.MessageType.Error]
        assert not errors, errors
        return seen
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_rename_typed_in_one_document_reaches_the_next_ones_prompt_and_stays_cached(
        tmp_path, tiny_qwen):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text(CORE)
    without = await _after_rename(root, tiny_qwen, recent_edits=False)
    with_edits = await _after_rename(root, tiny_qwen, recent_edits=True)
    # The core.py entry (its changed region, seven lines) and the repository lines.
    grown = with_edits[0]["prompt_tokens"] - without[0]["prompt_tokens"]
    assert 30 < grown < 120, grown
    # Each key: only the typed tail is evaluated (keys the suggestion cache answered aside).
    engine = [later for later in with_edits[1:] if "evaluated_tokens" in later]
    assert engine, with_edits
    for later in engine:
        assert later["evaluated_tokens"] <= 4, with_edits
