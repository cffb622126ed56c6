"""Which sequence a request or idle work takes when the prefix it needs is held elsewhere.

Each function reads the block table and returns a sequence (or None); none changes a
sequence's tokens (the caller truncates what it takes). None takes a pinned sequence
(``SeqState.pinned``): a growing one, and for idle work the in-view prompt's.
"""

from __future__ import annotations

from .holdings import BlockHoldings
from .records import SeqState


def free_seq(table: BlockHoldings, exclude: int | None) -> SeqState:
    """For a request: an empty sequence, else the least recently used one, branches first."""
    seqs = table.seqs
    free = [s for s in seqs if s.seq_id != exclude and not s.pinned(by_idle_work=False)]
    empty = [s for s in free if not s.tokens]
    if empty:
        empty[0].idle_from = None
        return empty[0]
    victim = min(free, key=lambda s: (s.idle_from is None, s.last_used))
    victim.idle_from = None
    return victim


def spare_seq(table: BlockHoldings, exclude: int | None) -> SeqState | None:
    """For idle work: an empty sequence, else the least recently used branch, else a stale
    request sequence (see ``stale_seq``), never ``exclude`` (the prompt's source); None when
    there is none of these."""
    spare = [s for s in table.seqs if s.seq_id != exclude and not s.pinned(by_idle_work=True)
             and (not s.tokens or s.idle_from is not None)]
    if not spare:
        return stale_seq(table, exclude)
    return min(spare, key=lambda s: (bool(s.tokens), s.last_used))


def latest_request(table: BlockHoldings) -> SeqState:
    """The sequence the last request ran in (sharing a prefix into a branch makes the branch
    the most recently used, so ``last_used`` does not tell it)."""
    return max(table.seqs, key=lambda s: s.requested)


def lru_request_seq(table: BlockHoldings, exclude: int | None) -> SeqState | None:
    """For the in-view prompt: the least recently used sequence other than ``exclude`` and
    the one the last request ran in; None when there is none."""
    seqs = table.seqs
    newest = latest_request(table)
    others = [s for s in seqs if s.seq_id != exclude and not s.pinned(by_idle_work=True)
              and s is not newest]
    if not others:
        return None
    victim = min(others, key=lambda s: s.last_used)
    victim.idle_from = None
    return victim


def stale_seq(table: BlockHoldings, exclude: int | None) -> SeqState | None:
    """A request's sequence holding an older state of a prompt: one that holds little of its
    own (other sequences hold the prompt up to near its end: the line before an Enter, a
    branch that was taken and then typed past), or one a later request for the same document
    left behind (the state before an Enter re-read the suffix). Without this, every taken
    branch turns a spare sequence into a request's, and after ``n_seq_max`` of them idle work
    has nowhere to go.

    Never the sequence the last request ran in or ``exclude``, and never one whose own
    tokens (held by no other sequence) are more than a quarter of it and more than two
    blocks, unless it is such an older state: a document's latest prompt stays. The one with
    the fewest own tokens goes first.
    """
    seqs = table.seqs
    newest = latest_request(table)
    stale = []
    for seq in seqs:
        if (seq.seq_id == exclude or seq.pinned(by_idle_work=True) or seq is newest
                or not seq.tokens):
            continue
        own = table.own_tail(seq, 0)
        if own <= max(2 * table.block_size, len(seq.tokens) // 4) or left_behind(table, seq):
            stale.append((own, seq.last_used, seq))
    return min(stale, key=lambda t: t[:2])[2] if stale else None


def left_behind(table: BlockHoldings, seq: SeqState) -> bool:
    """Whether a later request for ``seq``'s document ran in another sequence (that still
    holds it as a request's)."""
    return seq.document is not None and any(
        other.document == seq.document and other.idle_from is None
        and other.requested > seq.requested and other.tokens
        for other in table.seqs if other is not seq)
