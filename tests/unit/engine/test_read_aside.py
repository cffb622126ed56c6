"""The aside reader on a real (tiny) llama.cpp model: long reads on a second context whose
cells come back to the prefix cache's sequences."""

from __future__ import annotations

import numpy as np
import pytest

from lsp_coder.engine.llama import Model, ModelParams
from lsp_coder.engine.llama_context import Context, ContextParams, DecodeAborted
from lsp_coder.engine.prefill import prefill
from lsp_coder.engine.prefix_cache.manager import PrefixCache
from lsp_coder.engine.read_aside import ReadAside, _move, read_aside_enabled
from tests.unit.engine.test_idle_prefill import NEVER
from tests.unit.engine.test_prefix_cache import SOURCE_A, SOURCE_B, fresh_greedy, generate


def aside_cache(model, tiny_qwen, *, n_ubatch=64, aside_ctx=2048, min_tokens=16):
    """A prefix cache of 4 sequences whose long reads go to a ReadAside on a second load of
    the file (the context's fifth sequence is the cells' way in)."""
    aside = ReadAside(Model(tiny_qwen, ModelParams()),
                      ContextParams(n_ctx=aside_ctx, n_batch=n_ubatch, n_ubatch=n_ubatch),
                      min_tokens)
    ctx = Context(model, ContextParams(n_ctx=2048, n_batch=n_ubatch, n_ubatch=n_ubatch,
                                       n_seq_max=5))
    return PrefixCache(ctx, aside=aside, block_size=16)


def same_as_fresh(cache, model, prompt) -> bool:
    """Whether the cache's greedy answer is a fresh context's (up to an end of generation)."""
    got = generate(cache, model, prompt).tokens
    return bool(got) and got == fresh_greedy(model, prompt, 12)[: len(got)]


def test_a_long_read_goes_aside_and_answers_as_a_plain_read(model, tiny_qwen):
    cache = aside_cache(model, tiny_qwen)
    prompt = model.tokenize(SOURCE_A)
    assert same_as_fresh(cache, model, prompt)
    # All but the token whose logits are read went through the reader.
    assert cache.aside.read_tokens == len(prompt) - 1
    assert cache.scratch_seq == 4 and len(cache.seqs) == 4
    assert cache.ctx.seq_pos_max(cache.scratch_seq) == -1  # nothing left in passing
    cache.check()


def test_the_mirror_keeps_the_shared_front_and_follows_another_sequence(model, tiny_qwen):
    cache = aside_cache(model, tiny_qwen)
    a = model.tokenize(SOURCE_A)
    b = model.tokenize(SOURCE_B)
    generate(cache, model, a)
    # A branch that shares a's first 40 tokens: the mirror drops only what follows them.
    branch = a[:40] + model.tokenize("\n    def save(self, name, data):\n        with open(name,"
                                     " 'w') as out:\n            out.write(data)\n")
    assert prefill(cache, branch, NEVER, chunk_tokens=64).outcome == "done"
    assert cache.aside.tokens == branch
    # Another document on another sequence, then the first again, each as a fresh read gives.
    assert same_as_fresh(cache, model, b)
    longer = a + model.tokenize("\n\ndef write_config(path, data):\n    with open(path, 'w')"
                                " as f:\n        json.dump(data, f, indent=2)\n")
    assert same_as_fresh(cache, model, longer)
    assert cache.aside.tokens == longer[:-1]
    cache.check()


def test_a_read_stopped_aside_keeps_its_finished_ubatches(model, tiny_qwen):
    cache = aside_cache(model, tiny_qwen, n_ubatch=16)
    prompt = model.tokenize(SOURCE_A + SOURCE_B)
    reader = cache.aside.ctx
    start = reader.ubatches_done
    stop_after_two = lambda: reader.ubatches_done - start >= 2  # noqa: E731
    result = prefill(cache, prompt, stop_after_two, chunk_tokens=256)
    assert result.outcome == "cancelled"
    kept = cache.lookup(prompt)[1]
    assert result.evaluated_tokens == 32 and kept >= 32 - 16  # whole blocks of the two ubatches
    cache.check()
    assert same_as_fresh(cache, model, prompt)
    cache.check()


def test_reads_the_reader_cannot_hold_stay_on_the_main_context(model, tiny_qwen):
    cache = aside_cache(model, tiny_qwen, aside_ctx=256)
    prompt = model.tokenize(2 * (SOURCE_A + SOURCE_B))
    assert len(prompt) > cache.aside.ctx.n_ctx
    assert same_as_fresh(cache, model, prompt)
    assert cache.aside.read_tokens == 0
    short = model.tokenize("x = 1\n")
    generate(cache, model, short)  # shorter than min_tokens: read where it is
    assert cache.aside.read_tokens == 0
    cache.check()


def test_cells_that_find_no_room_are_not_moved(model):
    src = Context(model, ContextParams(n_ctx=512, n_batch=64, n_ubatch=64, n_seq_max=2))
    dst = Context(model, ContextParams(n_ctx=256, n_batch=64, n_ubatch=64, n_seq_max=2))
    try:
        src.decode(list(range(1000, 1300)), 0, 0, n_logits=0)
        assert not _move(src, 0, 1, 0, dst, 0, 1)  # 300 cells into 256
        assert dst.seq_pos_max(0) == dst.seq_pos_max(1) == src.seq_pos_max(1) == -1
        assert src.seq_pos_max(0) == 299
        assert _move(src, 0, 1, 200, dst, 0, 1)
        assert dst.seq_pos_max(0) == 299 and dst.seq_pos_max(1) == -1
    finally:
        src.close()
        dst.close()


def test_moved_cells_give_the_logits_of_a_context_that_read_them(model):
    tokens = model.tokenize(SOURCE_A)
    one = Context(model, ContextParams(n_ctx=1024, n_batch=64, n_ubatch=64, n_seq_max=2))
    two = Context(model, ContextParams(n_ctx=1024, n_batch=64, n_ubatch=64, n_seq_max=2))
    try:
        one.decode(tokens[:-1], 0, 0, n_logits=0)
        two.decode(tokens[:20], 0, 0, n_logits=0)
        two.decode(tokens[-1:], 20, 0)
        unmoved = two.logits(0)  # the last token read right after the first 20
        two.seq_rm(0, 20, -1)
        assert _move(one, 0, 1, 20, two, 0, 1)
        one.decode(tokens[-1:], len(tokens) - 1, 0)
        two.decode(tokens[-1:], len(tokens) - 1, 0)
        # As close as two reads in other batch splits come; far from the logits without them.
        np.testing.assert_allclose(two.logits(0), one.logits(0), rtol=0, atol=0.05)
        assert np.abs(unmoved - one.logits(0)).max() > 0.5
    finally:
        one.close()
        two.close()


GB = 1 << 30


@pytest.mark.parametrize(("setting", "params", "tiled", "free_gb", "on"), [
    ("auto", ModelParams(use_extra_bufts=True), True, 8, True),
    ("auto", ModelParams(use_extra_bufts=True), True, 3, False),  # little memory to spare
    ("auto", ModelParams(use_extra_bufts=True), False, 8, False),  # no tiled kernels
    ("true", ModelParams(use_extra_bufts=True), False, 3, True),
    ("false", ModelParams(use_extra_bufts=True), True, 8, False),
    ("true", ModelParams(use_extra_bufts=False), True, 8, False),  # plain weights read fast
    ("true", ModelParams(use_extra_bufts=True, use_mmap=False), True, 8, False),  # a 2nd copy
    ("true", ModelParams(use_extra_bufts=True, n_gpu_layers=-1), True, 8, False),
])
def test_when_there_is_a_reader(monkeypatch, setting, params, tiled, free_gb, on):
    monkeypatch.setattr("lsp_coder.engine.read_aside.build_has_tiled_kernels", lambda: tiled)
    assert read_aside_enabled(setting, params, GB, free_gb * GB) is on


def test_an_abort_before_the_first_ubatch_moves_nothing(model, tiny_qwen):
    cache = aside_cache(model, tiny_qwen)
    prompt = model.tokenize(SOURCE_B)
    seq = cache.prepare_branch(prompt).seq_id
    cache.ctx.cancel_check = lambda: True
    with pytest.raises(DecodeAborted) as stopped:
        cache.extend(seq, prompt, n_logits=0, idle=True)
    cache.ctx.cancel_check = None
    assert stopped.value.done == 0 and cache.lookup(prompt)[1] == 0
    cache.check()
