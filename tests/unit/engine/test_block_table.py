"""The prefix cache's block table on plain token lists: no model, no llama.cpp context.

``SimCells`` keeps what each sequence's cells hold (position -> token) the way llama.cpp's
memory does, so every decision the table applies (``seq_rm``, ``seq_cp``, ``seq_add``) can be
checked against its bookkeeping after each step.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_coder.engine.prefix_cache.block_table import BlockTable
from lsp_coder.engine.prefix_cache.choosing import left_behind
from lsp_coder.engine.prefix_cache.records import PromptTooLong


class SimCells:
    """What each sequence holds, position by position (a model of llama.cpp's KV memory)."""

    def __init__(self, n_seq: int) -> None:
        self.seqs: list[dict[int, int]] = [{} for _ in range(n_seq)]

    def seq_rm(self, seq_id: int, p0: int, p1: int = -1) -> bool:
        cells = self.seqs[seq_id]
        for pos in [p for p in cells if p >= p0 and (p1 < 0 or p < p1)]:
            del cells[pos]
        return True

    def seq_cp(self, src: int, dst: int, p0: int, p1: int) -> None:
        for pos, token in self.seqs[src].items():
            if p0 <= pos < p1:
                self.seqs[dst][pos] = token

    def seq_add(self, seq_id: int, p0: int, p1: int, delta: int) -> None:
        cells = self.seqs[seq_id]
        moved = {pos: cells.pop(pos) for pos in [p for p in cells if p0 <= p < p1]}
        cells.update({pos + delta: token for pos, token in moved.items()})

    def clear(self) -> None:
        for cells in self.seqs:
            cells.clear()

    def write(self, seq_id: int, pos0: int, tokens: list[int]) -> None:
        """What a decode does: the tokens take the positions after the sequence's last."""
        for i, token in enumerate(tokens):
            self.seqs[seq_id][pos0 + i] = token


def make_table(n_seq: int = 4, n_ctx: int = 512, block_size: int = 4, budget: int = 0,
               shift_min: int = 0) -> tuple[BlockTable, SimCells]:
    cells = SimCells(n_seq)
    table = BlockTable(cells, n_seq_max=n_seq, n_ctx=n_ctx, can_shift=True,
                       block_size=block_size, budget_tokens=budget, shift_min=shift_min)
    return table, cells


def evaluate(table: BlockTable, cells: SimCells, seq_id: int, tokens: list[int],
             idle: bool = False, in_view: bool = False) -> None:
    """What ``PrefixCache.extend`` does, with the simulated cells as the model."""
    with table.growing(seq_id):
        table.make_room(len(tokens), idle_only=idle and not in_view)
        cells.write(seq_id, len(table.tokens(seq_id)), tokens)
        table.record(seq_id, tokens, idle)
    # The budget holds once tokens are evaluated (a share may count a partial block twice
    # until then: ``used_cells`` is an upper bound, the shared cells are not copied).
    assert table.used_cells <= table.budget


def request(table: BlockTable, cells: SimCells, tokens: list[int], doc: str = "a") -> int:
    prepared = table.prepare(tokens, document=doc)
    evaluate(table, cells, prepared.seq_id, tokens[prepared.reused :])
    return prepared.reused


def check(table: BlockTable, cells: SimCells) -> None:
    """The table's view equals the cells', and the table agrees with itself."""
    table.check_bookkeeping()
    for seq in table.seqs:
        assert cells.seqs[seq.seq_id] == dict(enumerate(seq.tokens)), seq.seq_id


def test_a_hit_is_capped_at_all_but_the_last_token():
    table, cells = make_table()
    prompt = list(range(20))
    assert request(table, cells, prompt) == 0
    assert request(table, cells, prompt) == 19  # the last token is evaluated for its logits
    check(table, cells)


def test_a_shared_head_is_shared_and_the_first_tail_kept():
    table, cells = make_table(block_size=4)
    head = list(range(100, 140))
    request(table, cells, head + list(range(40)), doc="a")
    assert request(table, cells, head + list(range(500, 540)), doc="b") == len(head)
    # The first document's own tail was kept: its whole prompt is still cached.
    assert request(table, cells, head + list(range(40)), doc="a") == len(head) + 39
    check(table, cells)
    # The head's blocks are registered once, held by both sequences.
    held = [b for b in table.blocks.values() if len(b.holders) > 1]
    assert len(held) == len(head) // 4


def test_eviction_takes_idle_leaves_before_a_requests():
    table, cells = make_table(n_seq=3, block_size=4, budget=64)
    request(table, cells, list(range(24)), doc="a")
    branch = table.prepare_branch(list(range(1000, 1024)), document="b")
    evaluate(table, cells, branch.seq_id, list(range(1000, 1024)), idle=True)
    request(table, cells, list(range(2000, 2024)), doc="c")  # 72 cells wanted, 64 allowed
    assert table.tokens(0) == list(range(24))  # the request's prompt stayed whole
    assert len(table.tokens(branch.seq_id)) < 24  # the idle branch paid
    check(table, cells)


def test_idle_work_never_evicts_a_requests_blocks():
    table, cells = make_table(n_seq=3, block_size=4, budget=48)
    request(table, cells, list(range(24)), doc="a")
    request(table, cells, list(range(100, 120)), doc="b")
    branch = table.prepare_branch(list(range(1000, 1024)), document="c")
    assert branch is not None
    with pytest.raises(PromptTooLong):
        evaluate(table, cells, branch.seq_id, list(range(1000, 1024)), idle=True)
    assert table.tokens(0) == list(range(24)) and table.tokens(1) == list(range(100, 120))
    check(table, cells)


def test_a_growing_sequence_loses_nothing_and_its_pin_ends_with_the_extend():
    table, cells = make_table(n_seq=2, block_size=4, budget=32)
    request(table, cells, list(range(24)))
    # Only the growing sequence holds anything, so nothing may be evicted for it.
    with pytest.raises(PromptTooLong):
        evaluate(table, cells, 0, list(range(100, 116)))
    assert table.tokens(0) == list(range(24))
    assert table.seqs[0].grow_pins == 0  # the failed extend let go of its pin
    check(table, cells)


def test_only_the_last_in_view_prompts_sequence_carries_the_view_pin():
    table, cells = make_table(n_seq=4, block_size=4)
    first = table.prepare_branch(list(range(20)), in_view=True, document="a")
    evaluate(table, cells, first.seq_id, list(range(20)), idle=True, in_view=True)
    assert table.seqs[first.seq_id].pinned(by_idle_work=True)
    # Other idle work goes elsewhere; the next in-view prompt takes the pin over.
    other = table.prepare_branch(list(range(500, 520)), document="b")
    assert other.seq_id != first.seq_id
    second = table.prepare_branch(list(range(900, 920)), in_view=True, document="c")
    assert second.seq_id not in (first.seq_id, other.seq_id)
    assert [s.view_pins for s in table.seqs] == [int(i == second.seq_id) for i in range(4)]
    table.clear()
    assert not any(s.view_pins for s in table.seqs)
    check(table, cells)


def test_a_branch_leaves_the_requests_sequence_as_it_was():
    table, cells = make_table(block_size=4)
    request(table, cells, list(range(40)), doc="a")
    before = list(table.tokens(0))
    branch = table.prepare_branch(list(range(30)) + [900, 901, 902], document="a")
    assert branch is not None and branch.seq_id != 0 and branch.reused == 30
    evaluate(table, cells, branch.seq_id, [900, 901, 902], idle=True)
    assert table.tokens(0) == before
    # A request that reuses the branch's idle tokens counts them as used.
    assert request(table, cells, list(range(30)) + [900, 901, 902, 903]) == 33
    assert table.idle_used_tokens == 3
    check(table, cells)


def test_idle_tokens_a_branch_shared_on_count_once_when_a_request_reads_them():
    # The Enter branch of an answer holds its first line, then a newline; the accept branch
    # shares the first line from it and goes on with the answer's second line. Accepting
    # reads both branches' idle tokens: all of them count, and a later request that reads
    # the Enter branch's first line again does not count it twice.
    table, cells = make_table(block_size=4)
    request(table, cells, list(range(30)))
    first_line = list(range(900, 910))
    enter = table.prepare_branch(list(range(30)) + first_line + [1], document="a")
    evaluate(table, cells, enter.seq_id, first_line + [1], idle=True)
    accept_prompt = list(range(30)) + first_line + [2, 3, 4]
    accept = table.prepare_branch(accept_prompt, document="a")
    assert accept.seq_id != enter.seq_id and accept.reused == 40
    evaluate(table, cells, accept.seq_id, [2, 3, 4], idle=True)
    assert request(table, cells, accept_prompt + [5]) == 43
    assert table.idle_used_tokens == 13
    assert request(table, cells, list(range(30)) + first_line + [1, 6]) == 41
    assert table.idle_used_tokens == 14
    check(table, cells)


def test_a_branch_that_ends_inside_a_block_goes_on_in_place():
    # The branch holds the request's first 21 tokens (5 blocks and 1 token) and was stopped
    # before its own tokens; asked again, it goes on where it is. It used to count its one
    # shared partial token as its own, look elsewhere, and truncate the request's sequence.
    table, cells = make_table(n_seq=2, block_size=4)
    request(table, cells, list(range(22)))
    branch = list(range(21)) + [900, 901, 902]
    first = table.prepare_branch(branch, document="a")
    assert first is not None and first.seq_id == 1 and first.reused == 21
    again = table.prepare_branch(branch, document="a")
    assert again == first
    assert table.tokens(0) == list(range(22))
    check(table, cells)


def test_idle_work_never_takes_the_last_requests_sequence():
    # The only other sequence holds the in-view prompt's unused idle tokens (pinned), and a
    # branch from it must not truncate the latest request's, however little of it is its own
    # (sharing a prefix from the pinned one made that the most recently used).
    table, cells = make_table(n_seq=2, block_size=4)
    request(table, cells, list(range(40)))
    view = list(range(36)) + [800, 801, 802, 803]
    pinned = table.prepare_branch(view, in_view=True, document="a")
    evaluate(table, cells, pinned.seq_id, view[pinned.reused :], idle=True, in_view=True)
    assert table.prepare_branch(view + [900, 901], document="a") is None
    assert table.tokens(0) == list(range(40)) and table.tokens(1) == view
    check(table, cells)


def test_shifted_reuse_moves_a_cached_chunk_to_its_new_place():
    table, cells = make_table(block_size=4, shift_min=8)
    old = list(range(10)) + list(range(100, 110)) + list(range(200, 230))
    request(table, cells, old)
    new = list(range(10)) + list(range(200, 230)) + [7, 7]  # the middle run was deleted
    prepared = table.prepare(new)
    assert prepared.shifted == 30 and prepared.reused == 40
    evaluate(table, cells, prepared.seq_id, new[prepared.reused :])
    check(table, cells)


def test_a_prompt_over_the_budget_is_refused_and_nothing_changes():
    table, cells = make_table(budget=32)
    request(table, cells, list(range(16)))
    with pytest.raises(PromptTooLong):
        table.prepare(list(range(40)))
    assert table.tokens(0) == list(range(16))
    check(table, cells)


BASES = [list(range(0, 60)), list(range(1000, 1060)), list(range(0, 20)) + list(range(500, 540))]

prompts = st.builds(
    lambda base, cut, tail: BASES[base][:cut] + tail,
    st.integers(0, len(BASES) - 1), st.integers(0, 60),
    st.lists(st.integers(0, 3000), max_size=12))

steps = st.lists(st.one_of(
    st.tuples(st.just("request"), prompts, st.sampled_from("abc")),
    st.tuples(st.just("branch"), prompts, st.sampled_from("abc"), st.booleans()),
    st.tuples(st.just("truncate"), st.integers(0, 3), st.integers(0, 60)),
), max_size=30)


@settings(max_examples=150, deadline=None)
@given(steps, st.sampled_from([2, 4, 8]), st.sampled_from([0, 96, 160]),
       st.sampled_from([0, 6]))
def test_the_table_always_matches_its_cells_and_budget(ops, block_size, budget, shift_min):
    table, cells = make_table(n_seq=4, block_size=block_size, budget=budget,
                              shift_min=shift_min)
    idle_evaluated = 0
    for op in ops:
        try:
            if op[0] == "request":
                _, tokens, doc = op
                if tokens:
                    request(table, cells, tokens, doc)
            elif op[0] == "branch":
                _, tokens, doc, in_view = op
                # A request's latest prompt that holds much of its own (not an older state:
                # see choosing.stale_seq) is never idle work's to truncate or take.
                # Nor is the sequence the last request ran in.
                latest = max(table.seqs, key=lambda s: s.requested)
                kept = {s.seq_id: list(s.tokens) for s in table.seqs
                        if s.tokens and s.idle_from is None and (s is latest or (
                            not left_behind(table, s)
                            and table.own_tail(s, 0) > max(2 * block_size, len(s.tokens) // 4)))}
                branch = table.prepare_branch(tokens, in_view=in_view, document=doc)
                if branch is not None and branch.reused < len(tokens):
                    evaluate(table, cells, branch.seq_id, tokens[branch.reused :], idle=True,
                             in_view=in_view)
                    idle_evaluated += len(tokens) - branch.reused
                if not in_view:
                    assert {i: table.tokens(i) for i in kept} == kept
            else:
                _, seq_id, n = op
                table.truncate(seq_id, n)
        except PromptTooLong:
            pass
        check(table, cells)
        # Idle tokens a request read count once at most.
        assert table.idle_used_tokens <= idle_evaluated
