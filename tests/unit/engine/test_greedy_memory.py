"""The greedy memory: a typed-through suggestion is confirmed from the model's own picks."""

from __future__ import annotations

import pytest

from lsp_coder.engine.generate_request import GenerateRequest
from lsp_coder.engine.generator import Generator
from lsp_coder.engine.greedy_memory import GreedyMemory
from lsp_coder.engine.llama import Model, ModelParams
from lsp_coder.engine.llama_context import Context, ContextParams
from lsp_coder.engine.prefix_cache.manager import PrefixCache
from lsp_coder.engine.speculative import NGramLookup, PreviousSuggestion

CODE = '''import argparse


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True)
    return parser.'''


def test_continuation_starts_where_the_picks_were_greedy():
    memory = GreedyMemory()
    prompt, picks = [1, 2, 3, 4], [10, 11, 12]
    memory.remember(prompt + picks, greedy_from=len(prompt))
    assert memory.continuation(prompt) == picks
    assert memory.continuation(prompt + picks[:2]) == picks[2:]
    assert memory.continuation(prompt[:3]) == []  # a prompt token is not a pick
    assert memory.continuation([1, 2, 9, 4]) == []
    assert memory.continuation(prompt + picks) == []  # nothing known after the last pick


def test_a_generation_along_a_remembered_one_joins_it():
    memory = GreedyMemory()
    memory.remember([1, 2, 10, 11], greedy_from=2)
    memory.remember([1, 2, 10, 11, 12, 13], greedy_from=3)
    assert len(memory) == 1
    assert memory.continuation([1, 2]) == [10, 11, 12, 13]
    memory.remember([1, 2, 10, 20], greedy_from=3)  # another branch: both kept, newest first
    assert len(memory) == 2
    assert memory.continuation([1, 2, 10]) == [11, 12, 13]  # the longest wins


def test_capacity_drops_the_oldest():
    memory = GreedyMemory(capacity=2)
    for first in range(3):
        memory.remember([first, 1, 2], greedy_from=1)
    assert len(memory) == 2
    assert memory.continuation([0]) == []
    assert memory.continuation([2]) == [1, 2]


@pytest.fixture(scope="module")
def tiny(tiny_qwen):
    m = Model(tiny_qwen, ModelParams())
    yield m
    m.close()


def generator(model, memory=True):
    ctx = Context(model, ContextParams(n_ctx=2048, n_batch=256, n_ubatch=256, n_seq_max=4))
    cache = PrefixCache(ctx, block_size=16)
    return Generator(model, cache, [PreviousSuggestion(model), NGramLookup(max_k=4)],
                     memory=GreedyMemory() if memory else None)


def test_typing_through_needs_no_decode_and_matches_plain_greedy(tiny):
    gen = generator(tiny)
    prompt = tiny.tokenize(CODE)
    first = gen.generate(GenerateRequest(prompt=prompt, max_tokens=12))
    assert len(first.tokens) == 12 and first.stats.known_tokens == 0
    typed = first.tokens[:4]
    again = gen.generate(GenerateRequest(prompt=prompt + typed, max_tokens=8))
    assert again.tokens == first.tokens[4:]
    assert again.stats.known_tokens == 8
    assert again.stats.decode_steps == 0 and again.stats.evaluated_tokens == 0
    assert again.stats.reused_tokens == again.stats.prompt_tokens == len(prompt) + 4
    # Past the remembered picks it decodes on, and says what plain greedy decoding says.
    longer = gen.generate(GenerateRequest(prompt=prompt + typed, max_tokens=20))
    assert longer.stats.known_tokens == 8 and longer.stats.decode_steps > 0
    st = longer.stats
    assert st.prompt_tokens == st.reused_tokens + st.evaluated_tokens == len(prompt) + 12
    plain = generator(tiny, memory=False).generate(
        GenerateRequest(prompt=prompt, max_tokens=24, speculative=False))
    assert longer.tokens == plain.tokens[4:]
    assert gen.memory.continuation(prompt) == plain.tokens
    gen.cache.check()


def test_remembered_picks_obey_token_healing(tiny):
    gen = generator(tiny)
    prompt = tiny.tokenize(CODE)
    first = gen.generate(GenerateRequest(prompt=prompt, max_tokens=6))
    lead = tiny.piece(first.tokens[0]).decode("utf-8", "replace")[:1]
    assert lead
    healed = gen.generate(GenerateRequest(prompt=prompt, max_tokens=6, heal=lead))
    assert healed.tokens == first.tokens and healed.stats.known_tokens == 6
    # A pick made under the constraint is remembered when it was the argmax anyway.
    fresh = generator(tiny)
    fresh.generate(GenerateRequest(prompt=prompt, max_tokens=6, heal=lead))
    longer_heal = tiny.piece(first.tokens[0]).decode("utf-8", "replace")[:2]
    again = fresh.generate(GenerateRequest(prompt=prompt, max_tokens=6, heal=longer_heal))
    assert again.tokens == first.tokens and again.stats.known_tokens == 6
    other = "Z" if lead != "Z" else "Q"
    constrained = gen.generate(GenerateRequest(prompt=prompt, max_tokens=6, heal=other))
    assert constrained.stats.known_tokens == 0
    assert tiny.detokenize(constrained.tokens).startswith(other)


def test_sampling_and_the_switch_leave_the_memory_alone(tiny):
    gen = generator(tiny)
    prompt = tiny.tokenize(CODE)
    gen.generate(GenerateRequest(prompt=prompt, max_tokens=6))
    sampled = gen.generate(GenerateRequest(prompt=prompt, max_tokens=6, temperature=0.8))
    assert sampled.stats.known_tokens == 0
    gen.use_memory = False
    assert gen.generate(GenerateRequest(prompt=prompt, max_tokens=6)).stats.known_tokens == 0


def test_a_cancelled_generation_is_remembered_as_far_as_it_got(tiny):
    gen = generator(tiny)
    prompt = tiny.tokenize(CODE)
    seen: list[str] = []
    cut = gen.generate(GenerateRequest(prompt=prompt, max_tokens=12, on_text=seen.append,
                                       cancelled=lambda: len(seen) >= 5))
    assert cut.stop_reason == "cancelled" and len(cut.tokens) == 5
    # Typing along it: the next request starts from what the cancelled one had picked.
    joined = gen.generate(GenerateRequest(prompt=prompt + cut.tokens[:2], max_tokens=10))
    assert joined.stats.known_tokens == 3
    plain = generator(tiny, memory=False).generate(
        GenerateRequest(prompt=prompt, max_tokens=12, speculative=False))
    assert joined.tokens == plain.tokens[2:]


def test_a_recalled_token_keeps_the_probability_it_was_picked_with():
    memory = GreedyMemory()
    memory.remember([1, 2, 10, 11], greedy_from=2, probs=[None, None, 0.9, 0.5])
    # a longer generation along the first: its picks' probabilities join the first's
    memory.remember([1, 2, 10, 11, 12], greedy_from=4, probs=[None] * 4 + [0.7])
    assert memory.recall([1, 2]) == ([10, 11, 12], [0.9, 0.5, 0.7])
    assert memory.recall([1, 2, 10]) == ([11, 12], [0.5, 0.7])
    memory.remember([3, 4, 5], greedy_from=1)  # remembered without probabilities
    assert memory.recall([3]) == ([4, 5], [None, None])
    assert memory.recall([9]) == ([], [])


def test_a_healed_pick_along_a_remembered_one_keeps_the_greedy_probability():
    memory = GreedyMemory()
    memory.remember([1, 2, 10, 11], greedy_from=2, probs=[None, None, 0.4, 0.5])
    # typed through 10 with its last token held back: the pick of 10 was healed (0.95 among
    # the tokens that spell the typed text), the picks after it greedy
    memory.remember([1, 2, 10, 11, 12], greedy_from=3, probs=[None, None, 0.95, 0.6, 0.7])
    assert memory.recall([1, 2]) == ([10, 11, 12], [0.4, 0.6, 0.7])
