"""The model load's `$/progress`: one begin, percentages that only rise over both models'
weights, one end."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.conftest import server_env
from tests.lsp.helpers import SERVER, wait_for_model


async def test_progress_rises_over_both_models_and_ends_once(tiny_qwen, tiny_qwen_other_seed):
    client = make_test_lsp_client()
    await client.start_io(*SERVER, env=server_env())
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"model": {"path": str(tiny_qwen),
                                              "draft_path": str(tiny_qwen_other_seed),
                                              "n_ctx": 1024},
                                    "speculative": {"draft_model": True}}))
        totals = await wait_for_model(client)
        assert totals["model_loaded"], totals
        assert len(client.progress_reports) == 1, client.progress_reports
        (reports,) = client.progress_reports.values()
        kinds = [type(r).__name__ for r in reports]
        assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd", kinds
        assert kinds.count("WorkDoneProgressBegin") == kinds.count("WorkDoneProgressEnd") == 1
        percentages = [r.percentage for r in reports[:-1]]
        assert percentages[0] == 0 and percentages[-1] == 100, percentages
        assert all(a < b for a, b in zip(percentages, percentages[1:])), percentages
        messages = [r.message or "" for r in reports[1:-1]]
        target = [i for i, m in enumerate(messages) if m == f"loading {tiny_qwen.name}"]
        draft = [i for i, m in enumerate(messages) if m == f"loading {tiny_qwen_other_seed.name}"]
        assert target and draft and max(target) < min(draft), messages  # the target, then the draft
        assert reports[-1].message == "model ready"
    finally:
        await client.shutdown_session()
        await client.stop()
