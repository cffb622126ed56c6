"""Idle-time prefill on a real (tiny) llama.cpp model: branches of the prefix cache."""

from __future__ import annotations

from lsp_coder.engine.generate_request import GenerateRequest
from lsp_coder.engine.generator import Generator
from lsp_coder.engine.llama_context import Context, ContextParams
from lsp_coder.engine.prefill import prefill
from lsp_coder.engine.prefix_cache.manager import PrefixCache
from tests.unit.engine.test_prefix_cache import SOURCE_A, SOURCE_B, fresh_greedy

NEVER = lambda: False  # noqa: E731


def make_cache(model, *, n_seq_max=4, block_size=16, budget=0, n_ubatch=64):
    ctx = Context(model, ContextParams(n_ctx=2048, n_batch=n_ubatch, n_ubatch=n_ubatch,
                                       n_seq_max=n_seq_max))
    return PrefixCache(ctx, block_size=block_size, budget_tokens=budget)


def generate(cache, model, prompt, n=8):
    return Generator(model, cache).generate(
        GenerateRequest(prompt=prompt, max_tokens=n, speculative=False))


def held(cache: PrefixCache, tokens: list[int]) -> int:
    """How many leading tokens of ``tokens`` some sequence holds."""
    return cache.lookup(tokens)[1]


def test_a_taken_branch_makes_the_request_evaluate_only_its_new_tokens(model):
    cache = make_cache(model)
    live = model.tokenize(SOURCE_A)
    generate(cache, model, live)
    # The branch shares the live prompt's first 60 tokens and goes on differently.
    branch = live[:60] + model.tokenize("\n    def save(self, name):\n        pass\n")
    result = prefill(cache, branch, NEVER, chunk_tokens=8)
    assert result.outcome == "done" and result.reused_tokens == 60
    assert result.evaluated_tokens == len(branch) - 60
    assert held(cache, live) == len(live)  # the live document was not touched
    cache.check()
    typed = branch + model.tokenize("  # saved")
    taken = generate(cache, model, typed)
    assert taken.stats.reused_tokens == len(branch)
    assert taken.stats.evaluated_tokens == len(typed) - len(branch)
    assert cache.idle_used_tokens == len(branch) - 60
    cache.check()


def test_output_is_identical_to_no_prefill(model):
    live = model.tokenize(SOURCE_A)
    nxt = live[:70] + model.tokenize("\n\nclass Saver:\n    ")
    cache = make_cache(model)
    generate(cache, model, live)
    assert prefill(cache, nxt, NEVER).outcome == "done"
    with_branch = generate(cache, model, nxt, n=12)
    plain = generate(make_cache(model), model, nxt, n=12)
    assert with_branch.tokens == plain.tokens
    assert with_branch.tokens == fresh_greedy(model, nxt, 12)[: len(with_branch.tokens)]


def test_a_cancelled_prefill_stops_at_once_and_keeps_its_finished_chunks(model):
    cache = make_cache(model, n_ubatch=64)
    prompt = model.tokenize(SOURCE_A + SOURCE_B)
    ctx = cache.ctx
    start = ctx.ubatches_done
    asked_at: list[int] = []

    def cancelled() -> bool:
        if ctx.ubatches_done - start >= 2:
            asked_at.append(ctx.ubatches_done)
            return True
        return False

    result = prefill(cache, prompt, cancelled, chunk_tokens=16)
    assert result.outcome == "cancelled"
    # No ubatch was evaluated after the stop was asked for; the two before it stay cached.
    assert ctx.ubatches_done == asked_at[0]
    assert result.evaluated_tokens == 32 and held(cache, prompt) == 32
    cache.check()
    again = generate(cache, model, prompt, n=2)
    assert again.stats.reused_tokens == 32


def test_a_stop_between_chunks_lets_the_running_chunk_finish(model):
    cache = make_cache(model, n_ubatch=64)
    prompt = model.tokenize(SOURCE_A + SOURCE_B)
    ctx = cache.ctx
    start = ctx.ubatches_done
    polls_in_second_chunk = []

    def cancelled() -> bool:  # polled by the loop, then by the abort callback during a chunk
        if ctx.ubatches_done - start == 1:
            polls_in_second_chunk.append(1)
        return False

    # The stop is asked for while the second chunk runs (the abort callback's polls): that
    # chunk completes and stays cached, and the loop stops before the third.
    result = prefill(cache, prompt, cancelled, chunk_tokens=16,
                     stop=lambda: len(polls_in_second_chunk) >= 2)
    assert result.outcome == "cancelled"
    assert ctx.ubatches_done - start == 2
    assert result.evaluated_tokens == 32 and held(cache, prompt) == 32
    cache.check()


def test_branches_never_push_a_live_document_out_before_older_branches(model):
    cache = make_cache(model, n_seq_max=6, block_size=16, budget=480)
    a = model.tokenize(SOURCE_A * 2)[:150]
    b = model.tokenize(SOURCE_B * 3)[:120]
    generate(cache, model, a, n=2)
    generate(cache, model, b, n=2)
    live = {"a": a, "b": b}
    branches = [a[:64] + model.tokenize(f"\n# branch {i}\n" + "x = 1\n" * (12 + i))
                for i in range(5)]
    for i, branch in enumerate(branches):
        result = prefill(cache, branch, NEVER, chunk_tokens=16)
        assert result.outcome in ("done", "no_room")
        for name, tokens in live.items():
            assert held(cache, tokens) == len(tokens), (i, name)
        assert cache.used_cells <= 480
        cache.check()
        # The newest branch is whole when it fit; older ones went first.
        if result.outcome == "done":
            assert held(cache, branch) == len(branch)
            for older in branches[:i]:
                assert held(cache, older) <= len(branch)
    assert cache.evicted_blocks > 0


def test_a_request_evicts_branches_before_live_documents(model):
    cache = make_cache(model, n_seq_max=6, block_size=16, budget=480)
    a = model.tokenize(SOURCE_A * 2)[:150]
    generate(cache, model, a, n=2)
    branch = a[:64] + model.tokenize("x = 1\n" * 30)
    assert prefill(cache, branch, NEVER).outcome == "done"
    other = model.tokenize(SOURCE_B * 3)[:200]
    generate(cache, model, other, n=2)
    assert held(cache, a) == len(a)
    assert held(cache, branch) < len(branch)
    cache.check()


def test_taken_branches_leave_a_spare_sequence_for_the_next_ones(model):
    # Each taken branch becomes a request's sequence, and the state before it stays in its
    # own: with 3 sequences, the second branch found none spare before stale states were
    # reclaimed.
    cache = make_cache(model, n_seq_max=3, block_size=16)
    other = model.tokenize(SOURCE_B * 2)[:100]  # another document: its only copy
    generate(cache, model, other, n=2)
    state = model.tokenize(SOURCE_A * 2)[:120]
    generate(cache, model, state, n=2)
    for i in range(6):
        branch = state + model.tokenize(f"\n    line_{i} = {i}\n")
        result = prefill(cache, branch, NEVER, chunk_tokens=16)
        assert result.outcome == "done", (i, result)
        state = branch + model.tokenize(f"    x_{i} = 1")
        taken = generate(cache, model, state, n=2)
        assert taken.stats.reused_tokens == len(branch)
        assert held(cache, other) == len(other)
        cache.check()


SOURCE_C = "".join(f"let value_{i} = compute({i}, 'c');\n" for i in range(40))
SOURCE_D = "".join(f"<li id=\"d{i}\">item {i}</li>\n" for i in range(40))


def full_sequences(model) -> tuple[PrefixCache, list[list[int]], list[int]]:
    """Three documents in the three sequences (each its only copy, nothing stale), and the
    prompt of a fourth one."""
    cache = make_cache(model, n_seq_max=3, block_size=16)
    docs = [model.tokenize(source * 2)[:100] for source in (SOURCE_A, SOURCE_B, SOURCE_C)]
    for doc in docs:
        generate(cache, model, doc, n=2)
    return cache, docs, model.tokenize(SOURCE_D * 2)[:100]


def test_the_document_in_view_takes_the_least_recently_used_documents_sequence(model):
    # A prefill for a fourth document finds no room, unless the user is in it now.
    cache, docs, opened = full_sequences(model)
    assert prefill(cache, opened, NEVER, chunk_tokens=32).outcome == "no_room"
    assert [held(cache, doc) for doc in docs] == [len(doc) for doc in docs]
    result = prefill(cache, opened, NEVER, chunk_tokens=32, in_view=True)
    assert result.outcome == "done" and held(cache, opened) == len(opened)
    assert held(cache, docs[0]) == 0  # the least recently used one went
    assert [held(cache, doc) for doc in docs[1:]] == [len(doc) for doc in docs[1:]]
    cache.check()
    request = generate(cache, model, opened + model.tokenize("\n<li>"), n=2)
    assert request.stats.reused_tokens == len(opened)


def test_a_second_in_view_prompt_leaves_the_first_ones_sequence(model):
    # The short prompt at the cursor, then the full prompt there (they share their first
    # tokens): both of the document in view. The full one takes the next least recently
    # used document's sequence; the short one, which the next key may still read, stays.
    cache, docs, short = full_sequences(model)
    assert prefill(cache, short, NEVER, chunk_tokens=32, in_view=True).outcome == "done"
    full = short[:16] + model.tokenize("".join(f"<p>{i}</p>\n" for i in range(60)))[:144]
    assert prefill(cache, full, NEVER, chunk_tokens=32, in_view=True).outcome == "done"
    assert held(cache, short) == len(short) and held(cache, full) == len(full)
    assert [held(cache, doc) for doc in docs] == [0, 0, len(docs[2])]
    cache.check()


def test_the_document_in_view_evicts_branches_before_other_documents(model):
    # Room for the three documents and the branch, not for a fourth document too.
    cache = make_cache(model, n_seq_max=6, block_size=16, budget=370)
    docs = [model.tokenize(source * 2)[:96] for source in (SOURCE_A, SOURCE_B, SOURCE_C)]
    for doc in docs:
        generate(cache, model, doc, n=2)
    branch = docs[2] + model.tokenize("".join(f"\nitem_{i} = {i}" for i in range(12)))[:32]
    assert prefill(cache, branch, NEVER, chunk_tokens=16).outcome == "done"
    opened = model.tokenize(SOURCE_D * 2)[:96]
    result = prefill(cache, opened, NEVER, chunk_tokens=16, in_view=True)
    assert result.outcome == "done" and held(cache, opened) == len(opened)
    assert held(cache, branch) == len(docs[2])  # the branch's own blocks went first
    assert held(cache, docs[0]) < len(docs[0])  # then the least recently used document's
    assert [held(cache, doc) for doc in docs[1:]] == [len(doc) for doc in docs[1:]]
    assert cache.used_cells <= 370
    cache.check()


def test_other_idle_work_does_not_take_the_document_in_views_sequence(model):
    # The three sequences: two documents and the prompt of the one the user is in. A branch
    # of the file just left finds no room: the in-view prompt is not the spare branch.
    cache, docs, opened = full_sequences(model)
    assert prefill(cache, opened, NEVER, chunk_tokens=32, in_view=True).outcome == "done"
    left = docs[2] + model.tokenize("\nitem = 1")
    assert prefill(cache, left, NEVER, chunk_tokens=32).outcome == "no_room"
    assert held(cache, opened) == len(opened)
    cache.check()


def test_other_idle_work_does_not_evict_the_document_in_views_blocks(model):
    # Room for the documents and the in-view prompt, not for another branch as well: the
    # branch may evict only idle blocks, and the in-view prompt's are not its to take.
    cache = make_cache(model, n_seq_max=6, block_size=16, budget=340)
    docs = [model.tokenize(source * 2)[:96] for source in (SOURCE_A, SOURCE_B)]
    for doc in docs:
        generate(cache, model, doc, n=2)
    opened = model.tokenize(SOURCE_D * 2)[:96]
    assert prefill(cache, opened, NEVER, chunk_tokens=16, in_view=True).outcome == "done"
    left = docs[1] + model.tokenize("".join(f"\nitem_{i} = {i}" for i in range(12)))[:64]
    assert prefill(cache, left, NEVER, chunk_tokens=16).outcome == "no_room"
    assert held(cache, opened) == len(opened)
    assert [held(cache, doc) for doc in docs] == [len(doc) for doc in docs]
    cache.check()


def test_an_in_view_branch_with_no_unused_tokens_is_not_kept_from_other_idle_work(model):
    # The in-view prefill is stopped right after sharing a prefix into the spare sequence: it
    # holds nothing of its own, so the next branch may take it.
    cache = make_cache(model, n_seq_max=3, block_size=16)
    docs = [model.tokenize(source * 2)[:100] for source in (SOURCE_A, SOURCE_B)]
    for doc in docs:
        generate(cache, model, doc, n=2)
    opened = docs[1][:64] + model.tokenize(SOURCE_D)[:36]
    stopped = prefill(cache, opened, lambda: True, chunk_tokens=16, in_view=True)
    assert stopped.outcome == "cancelled" and stopped.reused_tokens == 64
    left = docs[0] + model.tokenize("\nitem = 1")
    assert prefill(cache, left, NEVER, chunk_tokens=16).outcome == "done"
    assert [held(cache, doc) for doc in docs] == [len(doc) for doc in docs]
    cache.check()


def two_prompts_alike_then_another(model, first_uri: str, second_uri: str):
    """Three sequences: two prompts that share 4 blocks and go on differently for 5 (for
    ``first_uri`` and then ``second_uri``), then another document. Returns the cache, the
    three prompts and the outcome of a branch of the last document."""
    cache = make_cache(model, n_seq_max=3, block_size=16)
    shared = model.tokenize(SOURCE_A * 2)[:64]
    prompts = [shared + model.tokenize(SOURCE_C * 2)[:80],
               shared + model.tokenize(SOURCE_D * 2)[:80],
               model.tokenize(SOURCE_B * 2)[:100]]
    for prompt, uri in zip(prompts, (first_uri, second_uri, "file:///b.py")):
        Generator(model, cache).generate(GenerateRequest(prompt=prompt, max_tokens=2,
                                                         speculative=False, document=uri))
    branch = prompts[2] + model.tokenize("\nitem = 1")
    result = prefill(cache, branch, NEVER, chunk_tokens=16, document="file:///b.py")
    assert held(cache, branch) == (len(branch) if result.outcome == "done" else len(prompts[2]))
    return cache, prompts, result.outcome


def test_a_documents_state_left_behind_by_a_later_request_is_spare_for_idle_work(model):
    # Enter in a short prompt re-reads the suffix: the state before it keeps a long tail of
    # its own in another sequence. With the three sequences holding two states of one
    # document and another document, a branch takes the older state, never a latest one.
    cache, (before, after, other), outcome = two_prompts_alike_then_another(
        model, "file:///a.py", "file:///a.py")
    assert outcome == "done"
    assert [held(cache, p) for p in (before, after, other)] == [64, len(after), len(other)]
    cache.check()


def test_states_of_different_documents_are_not_older_states_of_one_another(model):
    # The same three sequences, but the first two prompts are for two documents that start
    # alike: each is its document's only copy, so the branch finds no room.
    cache, prompts, outcome = two_prompts_alike_then_another(
        model, "file:///a.py", "file:///c.py")
    assert outcome == "no_room"
    assert [held(cache, p) for p in prompts] == [144, 144, 100]
    cache.check()
