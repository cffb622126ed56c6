"""A module-scoped client of the real server on the embedded 0.5B model."""

from __future__ import annotations

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import server_env
from tests.lsp.helpers import SERVER, wait_for_model


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=server_env()),
                    scope="module", loop_scope="module")
async def client(lsp_client: LanguageClient, real_small_model):
    """No debounce and no time box, so each awaited request gets its whole answer.

    NOTE: ``completion_budget_ms`` is a hard budget for textDocument/completion (empty when it
    runs out), so it is set far above what a slow or loaded machine needs: these tests check
    the answer, not the latency; and where it lands, however sure the small model is of it
    (``min_confidence`` 0).
    """
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={
            "model": {"path": str(real_small_model), "draft_path": "none", "n_ctx": 2048},
            "completion": {"debounce_ms": 0, "max_tokens": 48, "inline_budget_ms": 0,
                           "completion_budget_ms": 60_000, "min_confidence": 0.0},
        }))
    totals = await wait_for_model(lsp_client)
    assert totals["model_loaded"], totals
    yield
    await lsp_client.shutdown_session()
