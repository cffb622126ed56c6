"""Other files over real stdio: the workspace folder, open documents and saves reach the prompt,
and a hostile workspace costs no message, no crash and no hang."""

from __future__ import annotations

import asyncio
import os
import time

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

CORE = ('class Engine:\n    """Runs jobs."""\n\n    def __init__(self, name: str, speed: int)'
        " -> None:\n        self.name = name\n\n    def start(self, when: float) -> bool:\n"
        "        return True\n")
APP = "from pkg.core import Engine\n\n\ndef main():\n    engine = Engine("


async def _prompt_tokens(client: LanguageClient, uri: str, text: str) -> int:
    open_doc(client, uri, text)
    result = await inline(client, uri, end_position(text))
    assert isinstance(result, types.InlineCompletionList)
    return (await server_stats(client))["recent"][-1]["prompt_tokens"]


async def test_the_workspace_folder_and_open_documents_reach_the_prompt(tmp_path, tiny_qwen):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    client = await start_in_folder(root, tiny_qwen)
    try:
        app = (root / "pkg" / "app.py").as_uri()
        with_definition = await _prompt_tokens(client, app, APP)
        # A method added on disk and reported by the client reaches the next request.
        core = root / "pkg" / "core.py"
        core.write_text(CORE + "\n    def stop(self, reason: str, force: bool = False) -> None:\n"
                        "        pass\n")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=core.as_uri(), type=types.FileChangeType.Changed)]))
        insert(client, app, 2, end_position(APP), "'a'")
        result = await inline(client, app, end_position(APP + "'a'"))
        assert isinstance(result, types.InlineCompletionList)
        changed = (await server_stats(client))["recent"][-1]["prompt_tokens"]
        assert changed >= with_definition + 12, (changed, with_definition)  # the stop() line
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"context": {"definitions": False, "open_files": False,
                                  "recent_edits": False,  # app.py's 'a' is an edit
                                  "visited_ranges": False}}))  # and app.py was visited
        without = await _prompt_tokens(client, (root / "pkg" / "app2.py").as_uri(), APP)
        # The definition of Engine: signature lines, not its body, in the repository format.
        assert 40 < with_definition - without < 120, (with_definition, without)
        short = "engine = Engine('a', 3)\nengine.start("
        plain = await _prompt_tokens(client, (root / "b1.py").as_uri(), short)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"context": {"definitions": False, "open_files": True}}))
        similar = await _prompt_tokens(client, (root / "b2.py").as_uri(), short)
        assert similar > plain + 20, (similar, plain)  # the open app.py's lines came with it
        errors = [m for m in client.messages if m.type == types.MessageType.Error]
        assert not errors, errors
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_hostile_workspace_gets_no_message_and_completions_go_on(tmp_path, tiny_qwen):
    root = tmp_path / "hostile"
    root.mkdir()
    os.symlink(root, root / "loop")
    os.mkfifo(root / "pipe.py")
    (root / "binary.py").write_bytes(b"def f():\0\0\0")
    (root / "huge.py").write_text("def big():\n    pass\n" + "#" * 2_000_000)
    (root / "broken.py").write_text("def ok(a):\n    return a\n\ndef broken(:\n")
    (root / "twice_a.py").write_text("def shared(x):\n    return x\n")
    (root / "twice_b.py").write_text("def shared(y, z):\n    return y\n")
    for i in range(20):
        folder = root / f"many{i}"
        folder.mkdir()
        for j in range(1000):
            (folder / f"m{j}.py").touch()
    client = await start_in_folder(root, tiny_qwen, context={"max_files": 5000})
    try:
        text = ("from broken import ok\nfrom twice_a import shared\nfrom binary import f\n"
                "from huge import big\n\nok(shared(f(big(")
        tokens = await _prompt_tokens(client, (root / "main.py").as_uri(), text)
        assert tokens > 0
        # The index is built (by the parsing subprocess) and the server still answers.
        deadline = time.monotonic() + 300
        while not (index := (await server_stats(client))["totals"]["workspace_index"])["ready"]:
            assert time.monotonic() < deadline, index
            await asyncio.sleep(0.2)
        assert 4990 <= index["files"] <= 5000, index  # binary, huge: read, then left out
        assert (await inline(client, (root / "main.py").as_uri(), end_position(text))).items \
            is not None
        shown = [m for m in client.messages if m.type in (types.MessageType.Error,
                                                          types.MessageType.Warning)]
        assert not shown, shown
    finally:
        await client.shutdown_session()
        await client.stop()
