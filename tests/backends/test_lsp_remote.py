"""The language server on a real serving engine (llama_cpp.server), killed and restarted mid
session: answers stay empty and quick while it is down, one message, and it comes back."""

from __future__ import annotations

import asyncio
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.backends.conftest import Engine, llama_cpp_server_engine
from tests.conftest import server_env
from tests.lsp.helpers import SERVER, inline, insert, open_doc, server_stats, wait_for_model

pytestmark = pytest.mark.real_model

TEXT = ("import math\n\n\ndef circle_area(radius):\n    \"\"\"Area of a circle.\"\"\"\n"
        "    return math.pi * radius ** 2\n\n\ndef circle_circumference(radius):\n    return")


@pytest.fixture
def engine(real_small_model, tmp_path):
    e = llama_cpp_server_engine(real_small_model, tmp_path / "engine.log", n_ctx=2048)
    e.start()
    yield e
    e.stop()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=server_env()))
async def client(lsp_client: LanguageClient, engine: Engine):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={
            "backend": {"kind": "openai", "url": engine.url, "fim_template": "qwen",
                        "timeout_ms": 120_000},
            "completion": {"debounce_ms": 0, "max_tokens": 24, "inline_budget_ms": 0},
        }))
    totals = await wait_for_model(lsp_client)
    assert totals["model_loaded"] and totals["backend"]["kind"] == "openai", totals
    yield
    await lsp_client.shutdown_session()


def texts(result) -> list[str]:
    return [item.insert_text for item in result.items]


async def test_engine_killed_and_restarted_mid_session(client: LanguageClient, engine: Engine):
    uri = "file:///tmp/geo.py"
    open_doc(client, uri, TEXT)
    end = types.Position(line=9, character=10)
    assert any(t.strip() for t in texts(await inline(client, uri, end)))

    engine.stop()
    version, col = 1, 10
    for ch in "(2 * math":  # keystrokes off the shown suggestion, while the engine is down
        version += 1
        insert(client, uri, version, types.Position(line=9, character=col), ch)
        col += 1
        start = time.monotonic()
        result = await inline(client, uri, types.Position(line=9, character=col))
        assert texts(result) == []
        assert time.monotonic() - start < 3.0  # the connect timeout bounds the first one
    down = [m for m in client.messages if engine.url in m.message]
    assert len(down) == 1, [m.message for m in client.messages]
    assert "start it" in down[0].message
    totals = (await server_stats(client))["totals"]
    assert totals["backend"]["health"]["up"] is False

    engine.start()
    # The user goes on typing; completions come back by themselves (the retry backs off from
    # 0.5 s, so a few keystrokes at a human pace may still be answered empty).
    deadline = time.monotonic() + 60
    while True:
        version += 1
        insert(client, uri, version, types.Position(line=9, character=col), " ")
        col += 1
        if any(t.strip() for t in texts(await inline(client, uri,
                                                      types.Position(line=9, character=col)))):
            break
        assert time.monotonic() < deadline, "no recovery after the engine came back"
        await asyncio.sleep(0.3)  # typing cadence
    back = [m for m in client.messages if "answers again" in m.message]
    assert len(back) == 1 and engine.url in back[0].message
    assert len([m for m in client.messages if "start it" in m.message]) == 1
    assert (await server_stats(client))["totals"]["backend"]["health"]["up"] is True
