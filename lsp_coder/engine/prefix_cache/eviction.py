"""Tiered LRU eviction of leaves: idle work's first, then the least recently used."""

from __future__ import annotations

from .holdings import BlockHoldings
from .records import SeqState


def pick_leaf(table: BlockHoldings, idle_only: bool) -> tuple[list[SeqState], int] | None:
    """The leaf to evict: the sequences that hold it and the position to truncate them at.

    A leaf is the last full block of all the sequences that hold it, or a sequence's bare
    partial tail. Idle leaves go first, then by last use. A pinned sequence (``SeqState.pinned``;
    for ``idle_only``, as idle work sees it) loses nothing, nor does a block one of them holds.
    ``idle_only``: only a leaf made by idle work may go. None when nothing may go.
    """
    kept = {seq.seq_id for seq in table.seqs if seq.pinned(by_idle_work=idle_only)}
    best: tuple[tuple[bool, float], list[SeqState], int] | None = None
    for seq in table.seqs:
        if seq.seq_id in kept or not seq.tokens:
            continue
        tail_start = len(seq.keys) * table.block_size
        tail_idle = seq.idle_from is not None and seq.idle_from <= tail_start
        if seq.keys:
            block = table.blocks[seq.keys[-1]]
            holders = [table.seqs[h] for h in block.holders]
            if not kept.isdisjoint(block.holders) or any(
                    len(h.keys) != len(seq.keys) for h in holders):
                if len(seq.tokens) == tail_start:
                    continue
                candidate = ((not tail_idle, seq.last_used), [seq], tail_start)
            else:
                candidate = ((not block.idle, block.last_used), holders, block.start)
        else:
            candidate = ((not tail_idle, seq.last_used), [seq], 0)
        if idle_only and candidate[0][0]:
            continue
        if best is None or candidate[0] < best[0]:
            best = candidate
    return None if best is None else (best[1], best[2])
