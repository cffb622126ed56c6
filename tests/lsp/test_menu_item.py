"""A client that shows suggestions as ghost text does not also get them as a completion item.

The VS Code extension, the Neovim plugin and Emacs's ghost text set the experimental client
capability ``lspCoderGhostText``: the server does not offer them ``completionProvider`` and
answers a completion request that comes anyway with an empty list. Helix, completion menus
and omnifunc do not set it, and keep the provider and the item.
"""

from __future__ import annotations

import attrs
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.conftest import server_env
from tests.lsp.helpers import (
    SERVER,
    complete,
    end_position,
    inline,
    open_doc,
    totals,
    wait_for_model,
)

TEXT = "import os\n\n\ndef read_config(path):\n    with open(path) as f:\n        return f.re"


async def start(model, *, ghost_text: bool) -> tuple[LanguageClient, types.InitializeResult]:
    client = make_test_lsp_client()
    await client.start_io(*SERVER, env=server_env())
    capabilities = client_capabilities("visual-studio-code")
    if ghost_text:
        capabilities = attrs.evolve(capabilities, experimental={"lspCoderGhostText": True})
    result = await client.initialize_session(types.InitializeParams(
        capabilities=capabilities, initialization_options={
            "model": {"path": str(model), "draft_path": "none", "n_ctx": 1024},
            "completion": {"debounce_ms": 0, "max_tokens": 16, "inline_budget_ms": 0,
                           "completion_budget_ms": 60_000}}))
    assert (await wait_for_model(client))["model_loaded"]
    return client, result


async def stop(client: LanguageClient) -> None:
    await client.shutdown_session()
    await client.stop()


async def suggestions(client: LanguageClient) -> tuple[list[str], list[types.CompletionItem],
                                                       int]:
    """The inline texts and the completion items at the end of TEXT, and how many requests
    reached the engine's scheduler for the completion."""
    uri = "file:///tmp/menu_item.py"
    open_doc(client, uri, TEXT)
    inline_result = await inline(client, uri, end_position(TEXT))
    before = (await totals(client))["requests"]
    listed = await complete(client, uri, end_position(TEXT))
    after = (await totals(client))["requests"]
    items = listed.items if isinstance(listed, types.CompletionList) else listed
    return [item.insert_text for item in inline_result.items], items, after - before


async def test_a_ghost_text_client_gets_no_completion_item(real_small_model):
    client, result = await start(real_small_model, ghost_text=True)
    try:
        texts, items, asked = await suggestions(client)
    finally:
        await stop(client)
    assert result.capabilities.completion_provider is None
    assert result.capabilities.inline_completion_provider
    assert texts and texts[0], texts
    assert not items and asked == 0, items


async def test_a_menu_client_keeps_the_completion_item(real_small_model):
    client, result = await start(real_small_model, ghost_text=False)
    try:
        texts, items, asked = await suggestions(client)
    finally:
        await stop(client)
    assert result.capabilities.completion_provider.trigger_characters == (".", "(")
    assert texts and texts[0], texts
    assert len(items) == 1 and asked == 1, items
    assert items[0].text_edit.new_text == "re" + texts[0], (items[0], texts)
