"""Visited ranges over real stdio: the lines where the cursor rested in one document (a
highlight asked there, as VS Code asks it) reach the prompt of a completion in another, as a
serving engine receives it (a recording stand-in on loopback), and keys typed there leave them
as they were."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.backends.standin import StandIn, Vocabulary
from tests.conftest import server_env
from tests.lsp.helpers import (
    SERVER,
    end_position,
    highlight,
    inline,
    insert,
    open_doc,
    wait_for_model,
)

FRAMES = "".join(f"def frame_step_{i}(x):\n    return x + {i}\n\n\n" for i in range(12)) + (
    "def checksum_of_frames(frames, seed=0x5EED):\n    total = seed\n    for frame in frames:\n"
    "        total = (total * 31 + frame) & 0xFFFF\n    return total\n")
APP = "from pkg import frames\n\n\ndef main(data):\n    digest = "


@pytest.fixture(scope="module")
def vocabulary(real_small_model) -> Vocabulary:
    return Vocabulary(real_small_model)


@pytest.fixture
def engine(vocabulary) -> Iterator[StandIn]:
    standin = StandIn(vocabulary, "llama-server", reply="1")
    yield standin
    standin.close()


async def _visit_then_complete(root: Path, engine: StandIn, visited_ranges: bool) -> list[str]:
    """The prompts of requests in app.py after the cursor rested on frames.py's checksum: at
    the end of app.py, then after each of three keys typed there."""
    client = make_test_lsp_client()
    await client.start_io(*SERVER, env=server_env())
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri(),
            initialization_options={
                "backend": {"kind": "llama-server", "url": engine.url, "fim_template": "qwen",
                            "timeout_ms": 60_000},
                "completion": {"debounce_ms": 0, "max_tokens": 4, "inline_budget_ms": 0},
                "idle": {"enabled": False},
                "context": {"workspace": False, "definitions": False, "open_files": False,
                            "visited_ranges": visited_ranges}}))
        assert (await wait_for_model(client))["model_loaded"]
        frames, app = (root / "pkg" / "frames.py").as_uri(), (root / "pkg" / "app.py").as_uri()
        open_doc(client, frames, FRAMES)
        line = FRAMES[: FRAMES.index("total = (total")].count("\n")
        await highlight(client, frames, types.Position(line=line, character=12))
        open_doc(client, app, APP)
        start = len(engine.prompts)
        text = APP
        for version, char in enumerate(["", "c", "h", "k"], start=1):
            if char:
                insert(client, app, version, end_position(text), char)
                text += char
            result = await inline(client, app, end_position(text))
            assert isinstance(result, types.InlineCompletionList)
        errors = [m for m in client.messages if m.type == types.MessageType.Error]
        assert not errors, errors
        return [engine.vocabulary.text(p) for p in engine.prompts[start:]]
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_range_visited_in_one_document_reaches_the_next_ones_prompt_and_stays_put(
        tmp_path, engine):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "frames.py").write_text(FRAMES)
    without = await _visit_then_complete(root, engine, visited_ranges=False)
    with_visits = await _visit_then_complete(root, engine, visited_ranges=True)
    assert len(without) == len(with_visits) == 4
    assert not any("checksum_of_frames" in p for p in without)
    first = with_visits[0]
    # The lines around the cursor's (blank ones at the ends left out), as a file entry before
    # the open file's.
    visited = FRAMES[FRAMES.index("def checksum_of_frames"):].rstrip("\n")
    assert f"pkg/frames.py\n{visited}\n<|file_sep|>pkg/app.py\n" in first, first
    assert "frame_step_11" not in first  # only the lines around the cursor's rest
    # Keys typed in app.py leave the front, visited range included, as it was.
    front = first[: first.index("pkg/app.py")]
    assert all(p.startswith(front) for p in with_visits[1:])
