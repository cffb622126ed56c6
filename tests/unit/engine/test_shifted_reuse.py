"""Shifted reuse: cached chunks that moved left are kept with seq_rm + seq_add."""

from __future__ import annotations

import pytest

from lsp_coder.engine.generate_request import GenerateRequest
from lsp_coder.engine.generator import Generator
from lsp_coder.engine.llama import Model, ModelParams
from lsp_coder.engine.llama_context import Context, ContextParams
from lsp_coder.engine.prefix_cache.manager import PrefixCache

LINES = [f"def step_{i}(state):\n    state.value += {i}\n    return state\n\n" for i in range(30)]


def cache_for(model, shift_min):
    ctx = Context(model, ContextParams(n_ctx=4096, n_batch=256, n_ubatch=256, n_seq_max=4))
    return PrefixCache(ctx, block_size=16, shift_min=shift_min)


def test_a_deleted_line_keeps_the_rest_of_the_prompt(tiny_qwen):
    model = Model(tiny_qwen, ModelParams())
    cache = cache_for(model, shift_min=16)
    gen = Generator(model, cache)
    before = model.tokenize("".join(LINES))
    after = model.tokenize("".join(LINES[:5] + LINES[6:]))
    gen.generate(GenerateRequest(prompt=before, max_tokens=2, speculative=False))
    result = gen.generate(GenerateRequest(prompt=after, max_tokens=4, speculative=False))
    head = len(model.tokenize("".join(LINES[:5])))
    # Everything after the deleted line moved left and was kept; only the last token (its
    # logits are needed) was evaluated.
    assert result.stats.reused_tokens == len(after) - 1
    assert len(after) - head - 16 <= result.stats.shifted_tokens < len(after) - head
    cache.check()  # llama.cpp's positions agree with the bookkeeping
    # The next request builds on the shifted sequence as on any other.
    again = gen.generate(GenerateRequest(prompt=after + model.tokenize("# more"),
                                         max_tokens=2, speculative=False))
    assert again.stats.reused_tokens >= len(after) - 1
    cache.check()


def test_cells_shared_with_another_sequence_are_not_moved(tiny_qwen):
    model = Model(tiny_qwen, ModelParams())
    cache = cache_for(model, shift_min=16)
    gen = Generator(model, cache)
    doc = model.tokenize("".join(LINES))
    gen.generate(GenerateRequest(prompt=doc, max_tokens=2, speculative=False))
    # A second prompt shares most of the document (its cells are shared, not copied).
    gen.generate(GenerateRequest(prompt=doc[:300] + model.tokenize("x = 1\n" * 40),
                                 max_tokens=2, speculative=False))
    cut = model.tokenize("".join(LINES[:2] + LINES[3:]))
    gen.generate(GenerateRequest(prompt=cut, max_tokens=2, speculative=False))
    cache.check()
    second = gen.generate(GenerateRequest(prompt=doc[:300] + model.tokenize("x = 1\n" * 40),
                                          max_tokens=2, speculative=False))
    assert second.stats.reused_tokens >= 300
    cache.check()


@pytest.mark.real_model
def test_quality_cost_of_shifting_stays_within_tolerance(real_small_model):
    """Greedy output after a deleted line, exact vs shifted: agree in at least 2 of 3 cases.

    Shifted KV saw a slightly different context, so some drift is expected; measured on
    standard-library code it was 13 of 15 identical (see the issue note).
    """
    model = Model(real_small_model, ModelParams())
    exact = Generator(model, cache_for(model, shift_min=0))
    shifted = Generator(model, cache_for(model, shift_min=32))
    source = "".join(LINES)
    same = cases = saved = 0
    for removed in (3, 9, 15, 21, 24, 27):
        before = model.tokenize(source)
        after = model.tokenize("".join(LINES[:removed] + LINES[removed + 1 :]) + "def step_")
        for gen in (exact, shifted):
            gen.generate(GenerateRequest(prompt=before, max_tokens=1, speculative=False))
        a = exact.generate(GenerateRequest(prompt=after, max_tokens=10, speculative=False))
        b = shifted.generate(GenerateRequest(prompt=after, max_tokens=10, speculative=False))
        saved += a.stats.evaluated_tokens - b.stats.evaluated_tokens
        cases += 1
        same += a.text == b.text
        shifted.cache.check()
    assert saved > 0
    assert same * 3 >= cases * 2, f"only {same}/{cases} identical"
