"""Every number that reaches llama.cpp is range-checked: its edges pass, one step past is
refused by name with the allowed range, and the previous value is kept."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest

from lsp_coder.config import Config, ConfigError, apply


def ranged_keys() -> list[tuple[str, str, float, float]]:
    out = []
    for section in fields(Config):
        for f in fields(section.default_factory()):
            if "range" in f.metadata:
                out.append((section.name, f.name, *f.metadata["range"]))
    return out


RANGED = ranged_keys()


def test_every_number_of_the_model_and_the_budgets_is_ranged():
    names = {f"{s}.{k}" for s, k, _, _ in RANGED}
    for key in ("model.n_ctx", "model.n_batch", "model.n_ubatch", "model.n_seq_max",
                "model.n_threads", "model.n_gpu_layers", "completion.max_tokens",
                "completion.temperature", "completion.prefix_tokens",
                "completion.suffix_tokens", "context.budget_tokens",
                "cache.block_size", "cache.kv_budget_tokens", "speculative.max_draft",
                "speculative.p_min"):
        assert key in names


@pytest.mark.parametrize("section,key,low,high", RANGED,
                         ids=[f"{s}.{k}" for s, k, _, _ in RANGED])
def test_edges_pass_and_one_step_past_is_refused(section, key, low, high):
    def layer(value):
        out = {section: {key: value}}
        if (section, key) == ("model", "n_batch"):
            out["model"]["n_seq_max"] = 1  # n_batch may not be below it
        return out

    for value in (low, high):
        assert getattr(getattr(apply(Config(), layer(value), "t"), section), key) == value
    step = 1 if isinstance(low, int) else 0.001
    previous = apply(Config(), layer(low), "t")
    bad_values = [low - step, high + step]
    if isinstance(low, float):
        bad_values += [math.nan, math.inf]
    other = ("speculative", "ngram") if section == "completion" else ("completion", "fim_layout")
    other_value = False if other[1] == "ngram" else "spm"
    for bad in bad_values:
        layer = {section: {key: bad}, other[0]: {other[1]: other_value}}
        with pytest.raises(ConfigError) as info:
            apply(previous, layer, "settings")
        message = str(info.value)
        assert f"{section}.{key}" in message and f"{low} to {high}" in message
        usable = info.value.usable
        assert getattr(getattr(usable, section), key) == low  # the previous good value
        assert getattr(getattr(usable, other[0]), other[1]) == other_value  # the rest applies


def test_a_wrong_type_costs_only_its_key():
    with pytest.raises(ConfigError) as info:
        apply(Config(), {"model": {"n_ctx": "big", "n_threads": 2}}, "t")
    assert "model.n_ctx = 'big'" in str(info.value)
    usable = info.value.usable
    assert (usable.model.n_ctx, usable.model.n_threads) == (Config().model.n_ctx, 2)


def test_n_batch_below_n_seq_max_is_refused_and_both_kept():
    with pytest.raises(ConfigError) as info:
        apply(Config(), {"model": {"n_batch": 4, "n_seq_max": 8, "n_threads": 2}}, "t")
    assert "model.n_batch = 4" in str(info.value) and "model.n_seq_max = 8" in str(info.value)
    usable = info.value.usable
    assert (usable.model.n_batch, usable.model.n_seq_max, usable.model.n_threads) == (512, 8, 2)


def test_max_tokens_over_half_the_kv_cache_is_refused():
    with pytest.raises(ConfigError) as info:
        apply(Config(), {"model": {"n_ctx": 1024}, "completion": {"max_tokens": 600}}, "t")
    assert "completion.max_tokens = 600" in str(info.value) and "512" in str(info.value)
    assert info.value.usable.completion.max_tokens == 96
    assert apply(Config(), {"model": {"n_ctx": 1024}, "completion": {"max_tokens": 512}}, "t")
