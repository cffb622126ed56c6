"""``speculative.draft_model = "auto"`` loads a draft model only where drafting could pay."""

from __future__ import annotations

from lsp_coder.config import Config
from lsp_coder.config.layers import apply
from lsp_coder.engine.engine import Engine


def loaded(target, draft, draft_model, tmp_path) -> Engine:
    config = apply(Config(), {"speculative": {"draft_model": draft_model}}, "test")
    return Engine(target, draft, config, costs_file=tmp_path / "batch-costs.json")


def test_auto_leaves_out_a_draft_that_cannot_pay_and_true_loads_it(tiny_qwen,
                                                                   tiny_qwen_other_seed,
                                                                   tmp_path):
    # A draft as large as its target takes a target token's time to draft one: at any batch
    # costs it cannot make decoding 1.2x faster.
    engine = loaded(tiny_qwen, tiny_qwen_other_seed, "auto", tmp_path)
    try:
        assert engine.draft is None
        why = engine.describe()["draft_left_out"]
        assert tiny_qwen_other_seed.name in why and "draft_model = true" in why
        assert list(engine.costs_from) == [tiny_qwen.name]  # the draft was not even read
    finally:
        engine.close()
    engine = loaded(tiny_qwen, tiny_qwen_other_seed, True, tmp_path)
    try:
        assert engine.draft is not None and engine.describe()["draft_left_out"] == ""
    finally:
        engine.close()
