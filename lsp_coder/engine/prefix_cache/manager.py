"""The paged prefix cache over the sequences of one llama.cpp context.

The bookkeeping and every choice (what to reuse, where, what to evict) are the block table's
(``block_table.BlockTable``, which holds no context); this part evaluates tokens on the llama.cpp
context and makes room as it goes.
"""

from __future__ import annotations

from ..llama_context import Context, DecodeAborted, KvCacheFull
from ..read_aside import AsideFailed, ReadAside
from .block_table import BlockTable
from .records import Prepared, PromptTooLong
from .shifting import common_prefix

__all__ = ["Prepared", "PrefixCache", "PromptTooLong", "common_prefix"]


class PrefixCache(BlockTable):
    """Maps token prefixes to llama.cpp sequences and keeps the KV within a budget.

    Args:
        ctx: the context whose sequences this cache owns (all of them, or all but the last
            with ``aside``).
        aside: reads long runs of tokens on plain weights; its cells pass through ``ctx``'s
            last sequence, which the cache then leaves alone.
        **table: ``BlockTable``'s settings (``block_size``, ``budget_tokens``, ``inplace_tail``,
            ``reuse``, ``shift_min``).
    """

    def __init__(self, ctx: Context, aside: ReadAside | None = None, **table) -> None:
        n_seq = ctx.n_seq_max - (aside is not None)
        super().__init__(ctx, n_seq_max=n_seq, n_ctx=ctx.n_ctx, can_shift=ctx.can_shift,
                         **table)
        self.ctx = ctx
        self.aside = aside
        self.scratch_seq = n_seq
        """The sequence ``aside``'s cells pass through (none of the cache's)."""

    @property
    def used_bytes(self) -> int:
        return self.used_cells * self.ctx.model.kv_bytes_per_token()

    def extend(self, seq_id: int, tokens: list[int], *, n_logits: int = 1,
               idle: bool = False, in_view: bool = False) -> int:
        """Evaluate ``tokens`` at the end of a sequence and register its new full blocks.

        The sequence is pinned meanwhile (``growing``). Makes room first (evicting LRU leaves
        of other sequences) and again whenever llama.cpp reports the cells full. Returns the
        number of logits rows (see ``Context.decode``).
        Aborts (``DecodeAborted``) keep the chunks evaluated so far. ``idle``: the work of a
        branch (see ``prepare_branch``): its blocks get the idle tier, and it evicts only idle
        leaves (``PromptTooLong`` when that is not enough), unless ``in_view`` (the prompt
        of the document the user is in now): then, once no idle leaf is left, the least
        recently used leaves of requests, as a request would.
        """
        seq = self.seqs[seq_id]
        idle_only = idle and not in_view
        pending = list(tokens)
        rows = 0
        with self.growing(seq_id):
            while pending:
                self.make_room(len(pending), idle_only=idle_only)
                try:
                    rows = self._decode(seq_id, seq.tokens, pending, n_logits)
                except KvCacheFull as full:
                    self.record(seq_id, pending[: full.done], idle)
                    pending = pending[full.done :]
                    if not self.evict_one(idle_only=idle_only):
                        raise PromptTooLong("KV cache full and nothing left to evict") from full
                    continue
                except BaseException as exc:
                    done = getattr(exc, "done", None)
                    if done is None:
                        done = max(0, self.ctx.seq_pos_max(seq_id) + 1 - len(seq.tokens))
                    self.record(seq_id, pending[:done], idle)
                    raise
                self.record(seq_id, pending, idle)
                pending = []
        return rows

    def _decode(self, seq_id: int, held: list[int], tokens: list[int], n_logits: int) -> int:
        """``Context.decode`` of ``tokens`` after ``held``; the tokens before the last
        ``n_logits`` go to the aside reader when it takes them."""
        ahead = len(tokens) - n_logits
        aside = self.aside
        if aside is None or not aside.takes(len(held), ahead):
            return self.ctx.decode(tokens, len(held), seq_id, n_logits=n_logits)
        try:
            done = aside.read(self.ctx, seq_id, self.scratch_seq, held, tokens[:ahead])
        except AsideFailed:
            done = 0
        if done == len(tokens):
            return 0
        try:
            return self.ctx.decode(tokens[done:], len(held) + done, seq_id, n_logits=n_logits)
        except KvCacheFull as exc:
            raise KvCacheFull(done + exc.done) from exc
        except DecodeAborted as exc:
            raise DecodeAborted(done + exc.done) from exc

    def check(self) -> None:
        """Assert the bookkeeping is consistent and matches llama.cpp's view (for tests)."""
        for seq in self.seqs:
            assert self.ctx.seq_pos_max(seq.seq_id) == len(seq.tokens) - 1, (
                seq.seq_id, self.ctx.seq_pos_max(seq.seq_id), len(seq.tokens))
        self.check_bookkeeping()
