"""Speculative decoding on real models: KV hygiene, vocab checks, equality with plain greedy."""

from __future__ import annotations

import pytest

from lsp_coder.engine.generate_request import GenerateRequest
from lsp_coder.engine.generator import Generator
from lsp_coder.engine.greedy_memory import GreedyMemory
from lsp_coder.engine.llama import Model, ModelParams
from lsp_coder.engine.llama_context import Context, ContextParams
from lsp_coder.engine.prefix_cache.manager import PrefixCache
from lsp_coder.engine.sampling import probability, softmax
from lsp_coder.engine.speculative import (
    DraftModel,
    NGramLookup,
    PreviousSuggestion,
    vocab_mismatch,
)

CODE = '''def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.verbose:
        print("reading", args.input)
'''


def cache_for(model, n_seq_max=2):
    ctx = Context(model, ContextParams(n_ctx=2048, n_batch=256, n_ubatch=256,
                                       n_seq_max=n_seq_max))
    return PrefixCache(ctx, block_size=16)


@pytest.fixture(scope="module")
def tiny(tiny_qwen):
    m = Model(tiny_qwen, ModelParams())
    yield m
    m.close()


def test_incompatible_draft_vocabularies_are_refused(tiny, tiny_qwen_padded, tiny_qwen_nofim,
                                                     tiny_qwen_other_seed, tiny_codellama):
    padded = Model(tiny_qwen_padded, ModelParams(vocab_only=True))
    renamed = Model(tiny_qwen_nofim, ModelParams(vocab_only=True))
    same = Model(tiny_qwen_other_seed, ModelParams(vocab_only=True))
    llama = Model(tiny_codellama, ModelParams(vocab_only=True))
    assert "more than 128" in vocab_mismatch(tiny, padded)
    assert "token 151659 differs" in vocab_mismatch(tiny, renamed)
    assert "vocab types differ" in vocab_mismatch(tiny, llama)
    assert vocab_mismatch(tiny, same) is None


def test_a_draft_without_the_targets_infill_tokens_drafts_for_it(tiny_codellama,
                                                                 tiny_codellama_draft):
    # The preset CodeLlama-7B + TinyLlama: the draft has no <PRE>/<SUF>/<MID>, which llama.cpp
    # refuses as input, yet the prompt is full of them.
    from tests.fixtures.tiny_gguf import codellama_fim_ids

    target = Model(tiny_codellama, ModelParams())
    draft_model = Model(tiny_codellama_draft, ModelParams())
    try:
        assert draft_model.n_vocab == target.n_vocab - 4
        assert vocab_mismatch(target, draft_model) is None
        ids = codellama_fim_ids()
        prompt = ([target.bos, ids["pre"]] + target.tokenize("def main():\n    x = 1\n")
                  + [ids["suf"]] + target.tokenize("\n") + [ids["mid"]])
        draft_cache = cache_for(draft_model)
        draft = DraftModel(draft_model, draft_cache.ctx, draft_cache, p_min=0.0, max_k=4)
        cache = cache_for(target)
        plain = Generator(target, cache_for(target)).generate(
            GenerateRequest(prompt=prompt, max_tokens=8, speculative=False))
        result = Generator(target, cache, [draft]).generate(
            GenerateRequest(prompt=prompt, max_tokens=8))
        assert result.stats.draft_proposed.get("draft_model", 0) > 0
        assert result.tokens == plain.tokens
        assert all(t < draft_model.n_vocab for t in draft_cache.tokens(draft._seq))
        draft_cache.check()
    finally:
        draft_model.close()
        target.close()


def test_rejected_draft_tokens_leave_no_trace(tiny, tiny_qwen_other_seed):
    cache = cache_for(tiny)
    draft_model = Model(tiny_qwen_other_seed, ModelParams())
    draft_cache = cache_for(draft_model)
    draft = DraftModel(draft_model, draft_cache.ctx, draft_cache, p_min=0.0, max_k=4)
    wrong_hint = tiny.tokenize(" completely unrelated words that the model will not say")
    gen = Generator(tiny, cache, [PreviousSuggestion(tiny), NGramLookup(max_k=4), draft])
    prompt = tiny.tokenize(CODE)
    result = gen.generate(GenerateRequest(prompt=prompt, max_tokens=16, hint=wrong_hint))
    assert sum(result.stats.draft_proposed.values()) > 0
    seq_tokens = cache.tokens(cache.lookup(prompt + result.tokens)[0])
    # The target's KV holds exactly the prompt and the accepted tokens (the last one is
    # emitted, not evaluated), never a rejected draft token.
    assert seq_tokens == (prompt + result.tokens)[: len(seq_tokens)]
    assert len(seq_tokens) >= len(prompt) + len(result.tokens) - 1
    cache.check()
    draft.cache.check()


@pytest.mark.real_model
def test_speculative_greedy_equals_plain_greedy(real_small_model):
    model = Model(real_small_model, ModelParams())
    try:
        plain_cache = cache_for(model)
        spec_cache = cache_for(model)
        plain = Generator(model, plain_cache)
        spec = Generator(model, spec_cache, [PreviousSuggestion(model), NGramLookup(max_k=6)])
        lines = CODE.splitlines(keepends=True)
        mismatched = near_ties = 0
        for cut in range(5, len(lines), 2):
            prompt = model.tokenize("".join(lines[:cut]))
            a = plain.generate(GenerateRequest(prompt=prompt, max_tokens=16, speculative=False))
            hint = model.tokenize("".join(lines[cut:cut + 2]))
            b = spec.generate(GenerateRequest(prompt=prompt, max_tokens=16, hint=hint))
            near_ties += b.stats.near_ties
            if a.tokens != b.tokens:
                mismatched += 1
        assert sum(spec.records[n].proposed for n in spec.records) > 0
        # Batch numerics may flip a near-tie: allowed only where one was recorded.
        assert mismatched <= near_ties, (mismatched, near_ties)
    finally:
        model.close()


def test_max_tokens_holds_with_drafts(tiny):
    cache = cache_for(tiny)
    gen = Generator(tiny, cache, [PreviousSuggestion(tiny), NGramLookup(max_k=8)])
    prompt = tiny.tokenize(CODE)
    plain = gen.generate(GenerateRequest(prompt=prompt, max_tokens=12, speculative=False))
    for limit in (1, 5, 12):
        # The plain output as the hint: drafts are accepted whole, right up to the limit.
        result = gen.generate(GenerateRequest(prompt=prompt, max_tokens=limit,
                                              hint=plain.tokens))
        assert len(result.tokens) <= limit
        assert result.tokens == plain.tokens[: len(result.tokens)]
    cache.check()


def test_ngram_lookup_continues_the_last_suggestion_then_the_prompt():
    ngram = NGramLookup(n_max=3, n_min=2)
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    ngram.begin(prompt, hint=[], corpus=[9, 3, 4, 40, 41, 42])
    # "3 4" occurs in both: the last suggestion's continuation wins.
    assert ngram.propose(prompt + [3, 4], 2, 3).tokens == [40, 41, 42]
    # "6 7" only in the prompt.
    assert ngram.propose(prompt + [3, 4, 6, 7], 4, 2).tokens == [8, 3]
    assert ngram.propose(prompt + [99, 98], 2, 2).tokens == []


def test_previous_suggestion_follows_its_text_through_other_tokens(tiny):
    previous = PreviousSuggestion(tiny)
    prompt = tiny.tokenize("x = ")
    hint = tiny.tokenize(" parser.parse_args(argv)")
    previous.begin(prompt, hint, [])
    assert previous.propose(prompt + hint[:1], 1, 3).tokens == hint[1:4]
    # The target spelled " parser" in two tokens: the draft goes on after that text.
    split = tiny.tokenize(" pars") + tiny.tokenize("er")
    assert split != hint[: len(split)]
    rest = tiny.tokenize(".parse_args(argv)")
    assert previous.propose(prompt + split, len(split), 4).tokens == rest[:4]
    # Text that left the suggestion gets no draft.
    assert previous.propose(prompt + tiny.tokenize(" args"), 1, 4).tokens == []


def test_each_tokens_probability_is_the_same_picked_plainly_or_verified_in_a_draft(tiny):
    cache = cache_for(tiny)
    gen = Generator(tiny, cache, [PreviousSuggestion(tiny), NGramLookup(max_k=8)])
    prompt = tiny.tokenize(CODE)
    plain = gen.generate(GenerateRequest(prompt=prompt, max_tokens=12, speculative=False))
    drafted = gen.generate(GenerateRequest(prompt=prompt, max_tokens=12, hint=plain.tokens))
    assert sum(drafted.stats.draft_accepted.values()) > 0
    assert drafted.tokens == plain.tokens
    assert len(plain.stats.token_probs) == len(plain.tokens)
    assert drafted.stats.token_probs == pytest.approx(plain.stats.token_probs, rel=0.02)
    assert all(0.0 < p <= 1.0 for p in plain.stats.token_probs)
    # Taken from the greedy memory (no logits read), a token keeps the probability it was
    # picked with, also where the prompt has run along part of the remembered answer.
    remembering = Generator(tiny, cache_for(tiny), memory=GreedyMemory())
    first = remembering.generate(GenerateRequest(prompt=prompt, max_tokens=12))
    again = remembering.generate(GenerateRequest(prompt=prompt, max_tokens=12))
    assert again.stats.known_tokens == 12 and again.stats.token_probs == first.stats.token_probs
    typed = remembering.generate(GenerateRequest(prompt=prompt + first.tokens[:5], max_tokens=7))
    assert typed.stats.known_tokens == 7
    assert typed.stats.token_probs == first.stats.token_probs[5:]


def test_a_healed_picks_probability_is_its_share_among_the_tokens_that_spell_the_typed_text(
        tiny):
    prompt = tiny.tokenize(CODE)
    ctx = Context(tiny, ContextParams(n_ctx=2048, n_batch=256, n_ubatch=256, n_seq_max=1))
    try:
        ctx.decode(prompt, 0, 0)
        logits = ctx.logits(0)
    finally:
        ctx.close()
    heal = "Z"
    healed = Generator(tiny, cache_for(tiny)).generate(
        GenerateRequest(prompt=prompt, max_tokens=3, heal=heal, speculative=False))
    token = healed.tokens[0]
    allowed = tiny.healing_candidates(heal.encode())
    shares = softmax(logits[allowed], 1.0)
    expected = float(shares[list(allowed).index(token)])
    assert healed.stats.token_probs[0] == pytest.approx(expected, rel=0.02, abs=1e-4)
    assert healed.stats.token_probs[0] > probability(logits, token)  # the whole vocabulary's


@pytest.mark.real_model
def test_the_first_lines_tokens_end_with_its_line_break(real_small_model):
    model = Model(real_small_model, ModelParams())
    try:
        result = Generator(model, cache_for(model)).generate(
            GenerateRequest(prompt=model.tokenize(CODE), max_tokens=16))
        n = result.stats.first_line_tokens
        assert "\n" in result.text.strip(" ")  # the model goes on past the line
        assert "\n" in model.detokenize(result.tokens[:n]).lstrip()
        assert "\n" not in model.detokenize(result.tokens[: n - 1]).lstrip()
        # a sure continuation of the code above (print("writing", args.output) here)
        assert min(result.stats.token_probs[:n]) > 0.3
    finally:
        model.close()


@pytest.mark.real_model
def test_an_answer_that_starts_a_new_line_is_judged_by_the_line_it_writes(real_small_model):
    model = Model(real_small_model, ModelParams())
    try:
        # the cursor at the end of a finished function: the answer starts the next one
        prompt = model.tokenize("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n"
                                "    return a - b")
        result = Generator(model, cache_for(model)).generate(
            GenerateRequest(prompt=prompt, max_tokens=16))
        n = result.stats.first_line_tokens
        assert result.text.startswith("\n") and result.text.strip()
        head = model.detokenize(result.tokens[:n])  # "\n\n\ndef mul(a, b):\n"
        assert head.startswith("\n") and head.strip() and head.endswith("\n"), head
        assert "\n" not in model.detokenize(result.tokens[: n - 1]).strip()
    finally:
        model.close()
