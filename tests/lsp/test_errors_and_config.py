"""A missing model, bad settings and config precedence, over real stdio."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.conftest import server_env
from tests.lsp.helpers import (
    SERVER,
    end_position,
    inline,
    open_doc,
    server_stats,
    wait_for_model,
)

MISSING = "/nonexistent/models/missing-model.gguf"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=server_env()))
async def missing_model_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"model": {"path": MISSING}}))
    yield
    await lsp_client.shutdown_session()


async def test_missing_model_is_one_clear_message_and_empty_answers(
        missing_model_client: LanguageClient):
    client = missing_model_client
    totals = await wait_for_model(client)
    assert not totals["model_loaded"]
    assert MISSING in totals["error"]
    errors = [m for m in client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1, client.messages
    assert MISSING in errors[0].message and "config" in errors[0].message
    uri = "file:///tmp/x.py"
    open_doc(client, uri, "def f():\n    ")
    result = await inline(client, uri, end_position("def f():\n    "))
    assert isinstance(result, types.InlineCompletionList) and not result.items
    # The server is still up and still answers.
    assert (await server_stats(client))["totals"]["requests"] >= 1


@pytest.fixture
def config_file(tmp_path, tiny_qwen):
    path = tmp_path / "config.toml"
    path.write_text(f'[model]\npath = "{tiny_qwen}"\nn_ctx = 1024\n\n'
                    '[completion]\nmax_tokens = 4\n')
    return path


@pytest.fixture
def file_env(config_file):
    return server_env(LSP_CODER_CONFIG=str(config_file))


async def _start(env: dict[str, str], options) -> LanguageClient:
    client = make_test_lsp_client()
    await client.start_io(*SERVER, env=env)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options=options))
    return client


async def test_wrong_type_and_unknown_key_are_named_and_defaults_kept(file_env):
    client = await _start(file_env, {"completion": {"debounce_ms": "fast"},
                                     "modle": {"path": "x"}})
    try:
        totals = await wait_for_model(client)
        # The TOML file's model still loads: the bad layer alone was rejected.
        assert totals["model_loaded"], totals
        text = " ".join(m.message for m in client.messages)
        assert "initializationOptions" in text
        assert "debounce_ms" in text or "modle" in text
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_did_change_configuration_validates_and_applies(file_env):
    client = await _start(file_env, {"completion": {"max_tokens": 2}})
    try:
        assert (await wait_for_model(client))["model_loaded"]
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"lsp-coder": {"speculative": {"enabled": "yes"}}}))
        for _ in range(50):
            if any("speculative.enabled" in m.message for m in client.messages):
                break
            await asyncio.sleep(0.1)
        assert any("speculative.enabled" in m.message for m in client.messages), client.messages
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"completion": {"max_tokens": 3}}))
        uri = "file:///tmp/y.py"
        open_doc(client, uri, "x = 1\n")
        result = await inline(client, uri, types.Position(line=1, character=0))
        assert isinstance(result, types.InlineCompletionList)
        recent = (await server_stats(client))["recent"]
        assert recent[-1]["generated_tokens"] <= 3
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_bad_positions_and_unknown_documents_get_answers_not_crashes(file_env):
    client = await _start(file_env, {})
    try:
        assert (await wait_for_model(client))["model_loaded"]
        assert await inline(client, "file:///never/opened.py",
                            types.Position(line=0, character=0)) is None
        uri = "file:///tmp/short.py"
        open_doc(client, uri, "x = 1\ny = 2\n")
        for pos in (types.Position(line=99, character=0), types.Position(line=0, character=99)):
            result = await inline(client, uri, pos)
            assert isinstance(result, types.InlineCompletionList)
            items = await client.text_document_completion_async(types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=pos))
            assert isinstance(items, types.CompletionList)
            for item in items.items:
                assert item.text_edit.range.end in (types.Position(line=0, character=5),
                                                    types.Position(line=2, character=0))
        assert (await server_stats(client))["totals"]["requests"] >= 4
    finally:
        await client.shutdown_session()
        await client.stop()
