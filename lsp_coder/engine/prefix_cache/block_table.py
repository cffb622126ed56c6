"""The paged prefix cache's choices, over the bookkeeping of which sequence holds which blocks
(``holdings.BlockHoldings``).

Every sequence holds a run of tokens at positions ``0..n-1``. Its full blocks of ``block_size``
tokens are registered in a table keyed by hash chains, so a request finds the longest prefix any
sequence holds by walking its own chain. The prefix is reused in place (when the sequence's
remaining tail is short) or shared into another sequence with ``seq_cp``, which costs no compute:
with ``kv_unified`` the sequences share the KV cells.

::

    seq 0: [b1][b2][b3][b4].. <- typed in file A
    seq 1: [b1][b2][c3]..     <- file B: b1,b2 (extra context) shared with seq 0's cells

Memory: ``used_cells`` counts each registered block once plus every sequence's partial tail, an
upper bound on the cells in use. Before a decode would pass the budget, and whenever the cells
run out, the least recently used *leaf* block (the last full block of all the sequences that
hold it) is evicted: its holders are truncated at its start (``eviction.pick_leaf``).

Branches: idle work (``prepare_branch`` + an idle ``extend``) evaluates a prompt that is likely
to be needed next onto a spare sequence that shares the cached prefix. Its blocks are plain
entries with a lower retention tier: every eviction takes an idle leaf before any leaf a real
request made or used, and idle work itself only ever evicts idle leaves (it never pushes a live
document out), except for the document the user is in now (``in_view``: just opened, or the
cursor rests there), whose prompt may then take the least recently used request's room, as the
request it stands for would. A real request that reuses idle tokens promotes them to the normal
tier and counts them in ``idle_used_tokens``. When idle work finds no spare sequence it takes an
older state of a prompt (``choosing.stale_seq``).

Pins: a sequence counts the holds on it (``SeqState.grow_pins``, ``view_pins``), and choosing
and eviction leave a pinned one alone (``SeqState.pinned``). An extend pins the sequence it
grows (``growing``): nothing evicts it or takes it meanwhile. The sequence that holds the last
in-view prompt is pinned until the next in-view prompt is claimed or the table is cleared, and
while it holds idle tokens no request has used, other idle work neither takes it nor evicts its
blocks, and the next in-view prompt does not take it.

The table holds no llama.cpp context: it applies its decisions through ``KvCells`` (a
``llama.Context`` in the engine; a simulation in the tests), and the caller evaluates tokens
and tells the table with ``record`` (see ``manager.PrefixCache``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from .choosing import free_seq, lru_request_seq, spare_seq
from .eviction import pick_leaf
from .hashing import chain_hashes
from .holdings import BlockHoldings
from .records import KvCells, Prepared, PromptTooLong, SeqState
from .shifting import common_prefix, find_moved_chunks


class BlockTable(BlockHoldings):
    """Maps token prefixes to sequences and keeps the cells within a budget.

    Args:
        cells: where the decisions are applied (all of its sequences are the table's).
        n_seq_max: how many sequences there are.
        n_ctx: how many cells there are.
        can_shift: whether positions can be shifted (RoPE) for shifted reuse.
        block_size: tokens per block (hash granularity).
        budget_tokens: the most cells the cache may fill (0: ``n_ctx``).
        inplace_tail: a sequence whose tail after the shared prefix has at most this many tokens
            of its own is reused in place; a longer tail is kept and the prefix is shared into
            another sequence.
        reuse: False turns reuse off (every prompt is evaluated whole): the naive baseline.
        shift_min: when > 0 (and ``can_shift``), a cached chunk of at least this many tokens
            that now sits at another position is kept with ``seq_rm`` + ``seq_add`` instead of
            being evaluated again. Approximate: its KV saw a different context.
    """

    def __init__(self, cells: KvCells, *, n_seq_max: int, n_ctx: int, can_shift: bool,
                 block_size: int = 32, budget_tokens: int = 0, inplace_tail: int | None = None,
                 reuse: bool = True, shift_min: int = 0) -> None:
        if block_size < 1:
            raise ValueError("block_size must be positive")
        super().__init__(cells, n_seq_max=n_seq_max, block_size=block_size)
        self.budget = min(budget_tokens or n_ctx, n_ctx)
        self.inplace_tail = 4 * block_size if inplace_tail is None else inplace_tail
        self.reuse = reuse
        self.shift_min = shift_min if can_shift else 0
        self._clock = 0.0
        self.evicted_blocks = 0
        """Leaves evicted so far."""
        self.idle_used_tokens = 0
        """Tokens evaluated by idle work that a request later reused."""

    ##### Public API #####

    def lookup(self, tokens: list[int]) -> tuple[int | None, int]:
        """The sequence holding the longest prefix of ``tokens`` and that prefix's length."""
        if not self.reuse:
            return None, 0
        bs = self.block_size
        candidates = [s for s in self.seqs if s.tokens]
        hit = 0
        for i, key in enumerate(chain_hashes(tokens, bs)):
            block = self.blocks.get(key)
            if block is None:
                break
            candidates = [self.seqs[h] for h in block.holders]
            hit = i + 1
        best, best_len = None, 0
        for seq in candidates:
            n = common_prefix(seq.tokens, tokens, hit * bs)
            newer = best is not None and seq.last_used > best.last_used
            if n > best_len or (n == best_len and newer):
                best, best_len = seq, n
        return (best.seq_id if best else None), best_len

    def prepare(self, tokens: list[int], document: str | None = None) -> Prepared:
        """Make a sequence hold the longest cached prefix of ``tokens`` (at most all but one).

        The caller then evaluates ``tokens[reused:]`` and ``record``s them. The last token is
        always left to evaluate, since its logits are needed. ``document`` names the document
        the prompt is for: a request's sequence that a newer request for the same document has
        left behind is an older state idle work may reclaim (see ``choosing.stale_seq``).
        """
        self._check_fits(tokens)
        src_id, n = self.lookup(tokens)
        n = min(n, len(tokens) - 1)
        now = self._tick()
        if src_id is None or n <= 0:
            dst = free_seq(self, exclude=None)
            self._truncate(dst, 0)
            self._requested(dst, document, now)
            return Prepared(dst.seq_id, 0)
        src = self.seqs[src_id]
        self._count_idle_used(src, n)
        chunks = self._moved_chunks(src, tokens, n) if self.shift_min else []
        if chunks:
            src.idle_from = None
            self._requested(src, document, now)
            return self._shift_chunks(src, tokens, n, chunks)
        if self.own_tail(src, n) <= self.inplace_tail:
            self._truncate(src, n)
            src.idle_from = None
            self._requested(src, document, now)
            return Prepared(src.seq_id, n)
        dst = free_seq(self, exclude=src.seq_id)
        self._share(src, dst, n)
        self._requested(dst, document, now)
        src.last_used = now
        return Prepared(dst.seq_id, n)

    def prepare_branch(self, tokens: list[int], leave: int = 0, in_view: bool = False,
                       document: str | None = None) -> Prepared | None:
        """For idle work: make a spare sequence hold the longest cached prefix of ``tokens``.

        Unlike ``prepare`` it never truncates or moves a sequence a request made: the prefix is
        shared (``seq_cp``) into an empty sequence or the least recently used branch, and only
        a branch is ever extended in place. At most all but ``leave`` tokens are reused (all
        of them may already be held: ``reused`` is then ``len(tokens)``). Returns None when no
        spare sequence is left.

        ``in_view``: the prompt of the document the user is in now (opened, or the cursor
        came to rest there). Once no empty, branch or stale sequence is left it takes the
        least recently used request's sequence, as the request it stands for would. The
        sequence it ends up in is then kept from other idle work until the next in-view
        prompt (its view pin): work for another file, or a guess at the next key, must not
        undo it. ``document``: as for ``prepare``.
        """
        self._check_fits(tokens)
        src_id, n = self.lookup(tokens)
        n = min(n, len(tokens) - leave)
        src = None if src_id is None else self.seqs[src_id]
        if src is not None and n == len(tokens):
            return self._claimed(Prepared(src.seq_id, n), in_view)
        now = self._tick()
        # A branch goes on in place only when the prompt extends all it holds (the same job
        # again after a stop); one holding another guess (Enter's, when the accept branch of
        # the same answer comes next) is kept for it. The pinned sequence (the last in-view
        # prompt) goes on only with an in-view prompt; another in-view prompt (the full one
        # after a cursor's short one) does not truncate or take it: the next key may read it.
        if src is not None and src.idle_from is not None and n == len(src.tokens) and (
                not src.pinned(by_idle_work=True) or in_view):
            src.last_used = now
            src.document = document
            return self._claimed(Prepared(src.seq_id, n), in_view)
        exclude = None if src is None else src.seq_id
        dst = spare_seq(self, exclude)
        if dst is None and in_view:
            dst = lru_request_seq(self, exclude)
        if dst is None:
            return None
        dst.last_used = now
        dst.document = document
        if src is None or n <= 0:
            self._truncate(dst, 0)
            dst.idle_from = 0
            return self._claimed(Prepared(dst.seq_id, 0), in_view)
        self._share(src, dst, n)
        # Idle tokens of a branch shared on stay unused until a request reads them (the
        # accept branch of an answer shares its first line from the Enter branch).
        dst.idle_from = n if src.idle_from is None else min(n, src.idle_from)
        return self._claimed(Prepared(dst.seq_id, n), in_view)

    def record(self, seq_id: int, tokens: list[int], idle: bool = False) -> None:
        """The caller evaluated ``tokens`` at the end of a sequence: register its new full
        blocks (``idle``: as idle work's, the lowest retention tier)."""
        self._append(self.seqs[seq_id], tokens, idle)

    @contextmanager
    def growing(self, seq_id: int) -> Iterator[None]:
        """Pin a sequence while it is extended: no eviction or choice touches it."""
        seq = self.seqs[seq_id]
        seq.grow_pins += 1
        try:
            yield
        finally:
            seq.grow_pins -= 1

    def make_room(self, n_new: int, idle_only: bool = False) -> None:
        """Evict leaves until ``n_new`` more cells fit the budget (``PromptTooLong`` when they
        cannot). The sequence about to grow is pinned (``growing``); see ``evict_one``."""
        while self.used_cells + n_new > self.budget:
            if not self.evict_one(idle_only):
                raise PromptTooLong(f"cannot fit {n_new} more tokens in {self.budget} cells")

    def evict_one(self, idle_only: bool = False) -> bool:
        """Evict the least recently used leaf (a block or a bare partial tail), idle ones first.

        A pinned sequence loses nothing (``SeqState.pinned``). ``idle_only``: only a leaf made
        by idle work may go, and none of the in-view prompt's (for idle work itself, other than
        that prompt's). False when nothing may go.
        """
        leaf = pick_leaf(self, idle_only)
        if leaf is None:
            return False
        holders, start = leaf
        for seq in holders:
            self._truncate(seq, start)
        self.evicted_blocks += 1
        return True

    ##### Internal Helper Functions #####

    def _check_fits(self, tokens: list[int]) -> None:
        if len(tokens) + 1 > self.budget:
            raise PromptTooLong(f"{len(tokens)} tokens do not fit a KV budget of {self.budget}")

    def _requested(self, seq: SeqState, document: str | None, now: float) -> None:
        seq.document = document
        seq.requested = now
        self._touch(seq, now)

    def _claimed(self, prepared: Prepared, in_view: bool) -> Prepared:
        """Move the view pin to the sequence an in-view prompt was claimed in."""
        if in_view:
            for seq in self.seqs:
                if seq.view_pins:
                    seq.view_pins -= 1
            self.seqs[prepared.seq_id].view_pins += 1
        return prepared

    def _moved_chunks(self, seq: SeqState, tokens: list[int],
                      n: int) -> list[tuple[int, int, int]]:
        shared = max((common_prefix(other.tokens, seq.tokens) for other in self.seqs
                      if other is not seq), default=0)
        return find_moved_chunks(seq.tokens, tokens, n, shared, self.shift_min)

    def _shift_chunks(self, seq: SeqState, tokens: list[int], n: int,
                      chunks: list[tuple[int, int, int]]) -> Prepared:
        """Move each cached chunk left to where the request has it; drop everything else.

        ::

            cached : [ prefix 0..n ][ removed ][ chunk 1 ][ removed ][ chunk 2 ][ old tail ]
            request: [ prefix 0..n ][ chunk 1 ][ chunk 2 ][ new tail, evaluated ]
        """
        for i, j, m in chunks:
            self.cells.seq_rm(seq.seq_id, i, j)
            self.cells.seq_add(seq.seq_id, j, j + m, i - j)
        end = chunks[-1][0] + chunks[-1][2]
        self.cells.seq_rm(seq.seq_id, end, -1)
        self._forget_after(seq, n)
        self._append(seq, tokens[n:end])
        return Prepared(seq.seq_id, end, shifted=end - n)

    def _tick(self) -> float:
        self._clock = max(self._clock + 1e-6, time.monotonic())
        return self._clock

    def _count_idle_used(self, src: SeqState, n: int) -> None:
        """A request reuses the first ``n`` tokens of ``src``: count the idle ones as used.

        Full blocks count by their ``idle`` mark (a request clears it), so tokens another
        branch shared on and a request read there count once; the partial tail by
        ``idle_from``."""
        if src.idle_from is None or n <= src.idle_from:
            return
        bs, start = self.block_size, src.idle_from
        full = n // bs
        for i, key in enumerate(src.keys[:full]):
            if self.blocks[key].idle and (i + 1) * bs > start:
                self.idle_used_tokens += (i + 1) * bs - max(i * bs, start)
        self.idle_used_tokens += n - max(start, full * bs)
        src.idle_from = n
