"""The paged prefix cache on a real (tiny) llama.cpp model."""

from __future__ import annotations

import numpy as np
import pytest

from lsp_coder.engine.generate_request import GenerateRequest
from lsp_coder.engine.generator import Generator
from lsp_coder.engine.llama_context import Context, ContextParams
from lsp_coder.engine.prefix_cache.hashing import chain_hashes
from lsp_coder.engine.prefix_cache.manager import PrefixCache, PromptTooLong

SOURCE_A = '''import os
import sys


def read_config(path):
    """Read a config file and return its lines."""
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip()]


class Loader:
    def __init__(self, root):
        self.root = root

    def load(self, name):
        return read_config(os.path.join(self.root, name))
'''

SOURCE_B = '''fn main() {
    let numbers = vec![1, 2, 3, 4, 5];
    let total: i32 = numbers.iter().sum();
    println!("total = {}", total);
    for n in &numbers {
        if n % 2 == 0 {
            println!("{} is even", n);
        }
    }
}
'''


def make_cache(model, *, n_ctx=2048, n_seq_max=4, block_size=16, budget=0, n_ubatch=64):
    ctx = Context(model, ContextParams(n_ctx=n_ctx, n_batch=n_ubatch, n_ubatch=n_ubatch,
                                       n_seq_max=n_seq_max))
    return PrefixCache(ctx, block_size=block_size, budget_tokens=budget)


def fresh_greedy(model, prompt: list[int], n: int) -> list[int]:
    """Greedy tokens from a brand-new context that evaluates the whole prompt."""
    ctx = Context(model, ContextParams(n_ctx=2048, n_batch=512, n_ubatch=512, n_seq_max=1))
    try:
        ctx.decode(prompt, 0, 0)
        out = []
        for i in range(n):
            tok = int(np.argmax(ctx.logits(0)))
            out.append(tok)
            ctx.decode([tok], len(prompt) + i, 0)
        return out
    finally:
        ctx.close()


def generate(cache, model, prompt, n=12):
    gen = Generator(model, cache)
    return gen.generate(GenerateRequest(prompt=prompt, max_tokens=n, speculative=False))


def test_cached_path_gives_the_fresh_greedy_tokens(model):
    cache = make_cache(model)
    a = model.tokenize(SOURCE_A)
    b = model.tokenize(SOURCE_B)
    # Warm the cache with other prompts, a shared prefix and a divergent tail.
    generate(cache, model, b)
    generate(cache, model, a[:80])
    result = generate(cache, model, a)
    assert result.stats.reused_tokens >= 64
    expected = fresh_greedy(model, a, 12)
    assert result.tokens[: len(expected)] == expected[: len(result.tokens)]
    cache.check()


def test_partial_block_hit_and_divergent_tail(model):
    cache = make_cache(model, block_size=16)
    tokens = model.tokenize(SOURCE_A)
    first = generate(cache, model, tokens[:50], n=2)
    assert first.stats.reused_tokens == 0
    # 50 tokens = 3 full blocks + 2 tokens of a partial block; the 4th block diverges later.
    second = generate(cache, model, tokens[:50] + model.tokenize(" # changed"), n=2)
    assert second.stats.reused_tokens == 50
    assert second.stats.evaluated_tokens == second.stats.prompt_tokens - 50
    cache.check()


def test_two_documents_interleaved_stay_warm(model):
    cache = make_cache(model, n_seq_max=4)
    a = model.tokenize(SOURCE_A)
    b = model.tokenize(SOURCE_B)
    generate(cache, model, a, n=4)
    generate(cache, model, b, n=4)
    for _ in range(3):
        ra = generate(cache, model, a + model.tokenize("\n# a"), n=4)
        rb = generate(cache, model, b + model.tokenize("\n// b"), n=4)
        assert ra.stats.reused_tokens >= len(a) - 1
        assert rb.stats.reused_tokens >= len(b) - 1
        cache.check()


def test_shared_head_is_copied_not_recomputed(model):
    cache = make_cache(model, n_seq_max=4)
    head = model.tokenize(SOURCE_A)
    generate(cache, model, head + model.tokenize(SOURCE_B), n=2)
    other = generate(cache, model, head + model.tokenize("def other():\n    pass\n" * 8), n=2)
    # The head is shared (seq_cp), the first document's own tail is kept as it was.
    assert other.stats.reused_tokens >= len(head) - 1
    again = generate(cache, model, head + model.tokenize(SOURCE_B), n=2)
    assert again.stats.reused_tokens >= len(head) + 10
    cache.check()


def test_eviction_keeps_memory_within_a_tiny_budget(model):
    cache = make_cache(model, n_seq_max=4, budget=256, block_size=16)
    texts = [SOURCE_A, SOURCE_B, SOURCE_A.replace("config", "settings"), SOURCE_B * 2]
    for i in range(12):
        tokens = model.tokenize(texts[i % len(texts)])[:200]
        generate(cache, model, tokens, n=4)
        assert cache.used_cells <= 256
        cache.check()
    assert cache.evicted_blocks > 0


def test_prompt_larger_than_budget_is_refused_cleanly(model):
    cache = make_cache(model, budget=64)
    with pytest.raises(PromptTooLong):
        cache.prepare(model.tokenize(SOURCE_A))
    cache.check()


def test_chain_hashes_depend_on_everything_before():
    a = chain_hashes(list(range(64)), 16)
    b = chain_hashes([99] + list(range(1, 64)), 16)
    assert len(a) == 4 and all(x != y for x, y in zip(a, b))
    assert chain_hashes(list(range(40)), 16) == a[:2]
