"""The prefix cache's bookkeeping: which tokens each sequence holds, and which registered full
blocks (by their chain key) each holds, kept consistent with the cells.

The choices made over it (what to reuse, where, what to evict) are ``block_table.BlockTable``'s.
"""

from __future__ import annotations

from .hashing import ROOT_HASH, BlockHash, chain_hashes
from .records import Block, KvCells, SeqState


class BlockHoldings:
    """Every sequence's tokens and full blocks, and the registry of blocks by chain key.

    Args:
        cells: where the bookkeeping's changes are applied (all of its sequences are ours); it
            is cleared.
        n_seq_max: how many sequences there are.
        block_size: tokens per block (hash granularity).
    """

    def __init__(self, cells: KvCells, *, n_seq_max: int, block_size: int) -> None:
        self.cells = cells
        self.block_size = block_size
        self.seqs = [SeqState(i) for i in range(n_seq_max)]
        """Every sequence's state, indexed by its id."""
        self.blocks: dict[BlockHash, Block] = {}
        """Every registered full block, by its chain key."""
        cells.clear()

    ##### Public API #####

    def tokens(self, seq_id: int) -> list[int]:
        """The tokens a sequence holds (do not modify)."""
        return self.seqs[seq_id].tokens

    @property
    def used_cells(self) -> int:
        """Upper bound of the KV cells in use."""
        partial = sum(len(s.tokens) - len(s.keys) * self.block_size for s in self.seqs)
        return len(self.blocks) * self.block_size + partial

    def truncate(self, seq_id: int, n: int) -> None:
        """Drop everything after the first ``n`` tokens of a sequence (e.g. rejected drafts)."""
        self._truncate(self.seqs[seq_id], n)

    def clear(self) -> None:
        """Forget everything (the cells are cleared too)."""
        self.cells.clear()
        for seq in self.seqs:
            seq.tokens, seq.keys, seq.idle_from, seq.document = [], [], None, None
            seq.view_pins = 0
        self.blocks.clear()

    def own_tail(self, seq: SeqState, n: int) -> int:
        """Tokens after position ``n`` that no other sequence holds."""
        bs = self.block_size
        own = max(0, len(seq.tokens) - max(n, len(seq.keys) * bs))
        for i in range(len(seq.keys) - 1, -1, -1):
            end = (i + 1) * bs
            if end <= n or len(self.blocks[seq.keys[i]].holders) > 1:
                break
            own += end - max(n, i * bs)
        return own

    def check_bookkeeping(self) -> None:
        """Assert the table is consistent with itself (for tests)."""
        for seq in self.seqs:
            assert seq.keys == chain_hashes(seq.tokens, self.block_size)
            for key in seq.keys:
                assert seq.seq_id in self.blocks[key].holders
        for key, block in self.blocks.items():
            assert block.holders, key
            for h in block.holders:
                assert key in self.seqs[h].keys
        for seq in self.seqs:
            assert seq.grow_pins == 0, ("a grow pin outlived its extend", seq.seq_id)
            assert seq.view_pins in (0, 1), (seq.seq_id, seq.view_pins)
        assert sum(seq.view_pins for seq in self.seqs) <= 1, "more than one in-view pin"

    ##### Internal Helper Functions #####

    def _share(self, src: SeqState, dst: SeqState, n: int) -> None:
        """Make ``dst`` hold the first ``n`` tokens of ``src`` (their cells are shared)."""
        self._truncate(dst, 0)
        self.cells.seq_cp(src.seq_id, dst.seq_id, 0, n)
        dst.tokens = src.tokens[:n]
        dst.keys = src.keys[: n // self.block_size]
        for key in dst.keys:
            self.blocks[key].holders.add(dst.seq_id)

    def _touch(self, seq: SeqState, now: float) -> None:
        seq.last_used = now
        for key in seq.keys:
            block = self.blocks[key]
            block.last_used = now
            block.idle = False

    def _append(self, seq: SeqState, tokens: list[int], idle: bool = False) -> None:
        if not tokens:
            return
        bs = self.block_size
        if idle and seq.idle_from is None:
            seq.idle_from = len(seq.tokens)
        seq.tokens.extend(tokens)
        start = len(seq.keys) * bs
        parent = seq.keys[-1] if seq.keys else ROOT_HASH
        now = seq.last_used
        for key in chain_hashes(seq.tokens, bs, parent, start):
            block = self.blocks.get(key)
            if block is None:
                self.blocks[key] = Block(len(seq.keys) * bs, {seq.seq_id}, now, idle)
            else:
                block.holders.add(seq.seq_id)
                block.idle = block.idle and idle
            seq.keys.append(key)

    def _truncate(self, seq: SeqState, n: int) -> None:
        if n >= len(seq.tokens):
            return
        self.cells.seq_rm(seq.seq_id, n, -1)
        self._forget_after(seq, n)

    def _forget_after(self, seq: SeqState, n: int) -> None:
        """Drop tokens from ``n`` on from the bookkeeping (the cells are the caller's job)."""
        del seq.tokens[n:]
        if seq.idle_from is not None and seq.idle_from > n:
            seq.idle_from = n
        keep = n // self.block_size
        for key in seq.keys[keep:]:
            block = self.blocks[key]
            block.holders.discard(seq.seq_id)
            if not block.holders:
                del self.blocks[key]
        del seq.keys[keep:]
