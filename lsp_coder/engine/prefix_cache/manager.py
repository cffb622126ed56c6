"""Paged prefix cache over the sequences of one llama.cpp context.

Every sequence holds a run of tokens at positions ``0..n-1``. Its full blocks of ``block_size``
tokens are registered in a table keyed by hash chains, so a request finds the longest prefix any
sequence holds by walking its own chain. The prefix is reused in place (when the sequence's
remaining tail is short) or shared into another sequence with ``seq_cp``, which costs no compute:
with ``kv_unified`` the sequences share the KV cells.

::

    seq 0: [b1][b2][b3][b4].. <- typed in file A
    seq 1: [b1][b2][c3]..     <- file B: b1,b2 (extra context) shared with seq 0's cells

Memory: ``used_cells`` counts each registered block once plus every sequence's partial tail, an
upper bound on the cells in use. Before a decode would pass the budget, and whenever
``llama_decode`` reports no free cells, the least recently used *leaf* block (the last full block
of all the sequences that hold it) is evicted: its holders are truncated at its start.

Branches: idle work (``prepare_branch`` + ``extend(..., idle=True)``) evaluates a prompt that
is likely to be needed next onto a spare sequence that shares the cached prefix. Its blocks are
plain entries with a lower retention tier: every eviction takes an idle leaf before any leaf a
real request made or used, and idle work itself only ever evicts idle leaves (it never pushes a
live document out), except for the document the user is in now (``in_view``: just opened, or
the cursor rests there), whose prompt may then take the least recently used request's room,
as the request it stands for would. The sequence that holds that prompt is the user's until
the next in-view prompt, while it holds idle tokens no request has used: other idle work
neither takes it nor evicts its blocks, and the next in-view prompt does not take it. A real
request that reuses idle tokens promotes them to the normal tier and counts them in
``idle_used_tokens``. When idle work finds no spare sequence it takes an older state of a
prompt: a request's sequence that holds little of its own, or one that a later request for
the same document left behind (``_stale_seq``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..llama import Context, KvCacheFull
from .hashing import ROOT_HASH, BlockHash, chain_hashes


class PromptTooLong(RuntimeError):
    """The request needs more cells than the whole budget."""


@dataclass(slots=True)
class _Seq:
    seq_id: int
    tokens: list[int] = field(default_factory=list)
    keys: list[BlockHash] = field(default_factory=list)
    last_used: float = 0.0
    idle_from: int | None = None
    """Tokens from this position on were evaluated by idle work and no request used them yet."""
    document: str | None = None
    """The document whose prompt the sequence holds, when the caller said (see ``prepare``)."""
    requested: float = 0.0
    """When a request last ran in this sequence (``last_used`` also counts sharing from it)."""


@dataclass(slots=True)
class _Block:
    start: int
    holders: set[int]
    last_used: float
    idle: bool = False
    """Made by idle work and not used by a request yet: evicted before any other block."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """Where a request runs: ``seq_id`` already holds its first ``reused`` tokens.

    ``shifted`` of them were kept from another position with a RoPE shift.
    """

    seq_id: int
    reused: int
    shifted: int = 0


class PrefixCache:
    """Maps token prefixes to llama.cpp sequences and keeps the KV within a budget.

    Args:
        ctx: the context whose sequences this cache owns (all of them).
        block_size: tokens per block (hash granularity).
        budget_tokens: the most cells the cache may fill (0: the context size).
        inplace_tail: a sequence whose tail after the shared prefix has at most this many tokens
            of its own is reused in place; a longer tail is kept and the prefix is shared into
            another sequence.
        reuse: False turns reuse off (every prompt is evaluated whole): the naive baseline.
        shift_min: when > 0 (and the model can shift), a cached chunk of at least this many
            tokens that now sits at another position is kept with ``seq_rm`` + ``seq_add``
            instead of being evaluated again. Approximate: its KV saw a different context.
    """

    def __init__(self, ctx: Context, *, block_size: int = 32, budget_tokens: int = 0,
                 inplace_tail: int | None = None, reuse: bool = True,
                 shift_min: int = 0) -> None:
        if block_size < 1:
            raise ValueError("block_size must be positive")
        self.ctx = ctx
        self.block_size = block_size
        self.budget = min(budget_tokens or ctx.n_ctx, ctx.n_ctx)
        self.inplace_tail = 4 * block_size if inplace_tail is None else inplace_tail
        self.reuse = reuse
        self.shift_min = shift_min if ctx.can_shift else 0
        self._seqs = [_Seq(i) for i in range(ctx.n_seq_max)]
        self._blocks: dict[BlockHash, _Block] = {}
        self._clock = 0.0
        self._in_view: int | None = None
        """The sequence holding the last in-view prompt (see ``prepare_branch``)."""
        self.evicted_blocks = 0
        self.idle_used_tokens = 0
        """Tokens evaluated by idle work that a request later reused."""
        ctx.clear()

    ##### Public API #####

    def tokens(self, seq_id: int) -> list[int]:
        """The tokens a sequence holds (do not modify)."""
        return self._seqs[seq_id].tokens

    @property
    def used_cells(self) -> int:
        """Upper bound of the KV cells in use."""
        partial = sum(len(s.tokens) - len(s.keys) * self.block_size for s in self._seqs)
        return len(self._blocks) * self.block_size + partial

    @property
    def used_bytes(self) -> int:
        return self.used_cells * self.ctx.model.kv_bytes_per_token()

    def lookup(self, tokens: list[int]) -> tuple[int | None, int]:
        """The sequence holding the longest prefix of ``tokens`` and that prefix's length."""
        if not self.reuse:
            return None, 0
        bs = self.block_size
        candidates = [s for s in self._seqs if s.tokens]
        hit = 0
        for i, key in enumerate(chain_hashes(tokens, bs)):
            block = self._blocks.get(key)
            if block is None:
                break
            candidates = [self._seqs[h] for h in block.holders]
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

        The caller then evaluates ``tokens[reused:]`` with ``extend``. The last token is always
        left to evaluate, since its logits are needed. ``document`` names the document the
        prompt is for: a request's sequence that a newer request for the same document has
        left behind is an older state idle work may reclaim (see ``_stale_seq``).
        """
        if len(tokens) + 1 > self.budget:
            raise PromptTooLong(f"{len(tokens)} tokens do not fit a KV budget of {self.budget}")
        src_id, n = self.lookup(tokens)
        n = min(n, len(tokens) - 1)
        now = self._tick()
        if src_id is None or n <= 0:
            dst = self._free_seq(exclude=None)
            self._truncate(dst, 0)
            self._requested(dst, document, now)
            return Prepared(dst.seq_id, 0)
        src = self._seqs[src_id]
        self._count_idle_used(src, n)
        chunks = self._find_moved_chunks(src, tokens, n) if self.shift_min else []
        if chunks:
            src.idle_from = None
            self._requested(src, document, now)
            return self._shift_chunks(src, tokens, n, chunks)
        if self._own_tail(src, n) <= self.inplace_tail:
            self._truncate(src, n)
            src.idle_from = None
            self._requested(src, document, now)
            return Prepared(src.seq_id, n)
        dst = self._free_seq(exclude=src.seq_id)
        self._truncate(dst, 0)
        self.ctx.seq_cp(src.seq_id, dst.seq_id, 0, n)
        dst.tokens = src.tokens[:n]
        dst.keys = src.keys[: n // self.block_size]
        for key in dst.keys:
            self._blocks[key].holders.add(dst.seq_id)
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
        prompt: work for another file, or a guess at the next key, must not undo it.
        ``document``: as for ``prepare``.
        """
        if len(tokens) + 1 > self.budget:
            raise PromptTooLong(f"{len(tokens)} tokens do not fit a KV budget of {self.budget}")
        src_id, n = self.lookup(tokens)
        n = min(n, len(tokens) - leave)
        src = None if src_id is None else self._seqs[src_id]
        if src is not None and n == len(tokens):
            return self._claimed(Prepared(src.seq_id, n), in_view)
        now = self._tick()
        guarded = self._guarded()
        # The guarded sequence (the last in-view prompt) is extended in place only by the same
        # prompt going on; another in-view prompt (the full one after a cursor's short one)
        # does not truncate or take it either: the next key may still read it.
        if src is not None and src.idle_from is not None and n >= src.idle_from and (
                (src.seq_id != guarded or (in_view and n == len(src.tokens)))
                and self._own_tail(src, n) == len(src.tokens) - n):
            self._truncate(src, n)
            src.last_used = now
            src.document = document
            return self._claimed(Prepared(src.seq_id, n), in_view)
        exclude = {guarded} | ({src.seq_id} if src is not None else set())
        dst = self._spare_seq(exclude)
        if dst is None and in_view:
            dst = self._lru_request_seq(exclude)
        if dst is None:
            return None
        self._truncate(dst, 0)
        dst.last_used = now
        dst.document = document
        if src is None or n <= 0:
            dst.idle_from = 0
            return self._claimed(Prepared(dst.seq_id, 0), in_view)
        self.ctx.seq_cp(src.seq_id, dst.seq_id, 0, n)
        dst.tokens = src.tokens[:n]
        dst.keys = src.keys[: n // self.block_size]
        for key in dst.keys:
            self._blocks[key].holders.add(dst.seq_id)
        dst.idle_from = n
        return self._claimed(Prepared(dst.seq_id, n), in_view)

    def _requested(self, seq: _Seq, document: str | None, now: float) -> None:
        seq.document = document
        seq.requested = now
        self._touch(seq, now)

    def _claimed(self, prepared: Prepared, in_view: bool) -> Prepared:
        if in_view:
            self._in_view = prepared.seq_id
        return prepared

    def _guarded(self) -> int | None:
        """The sequence other idle work must leave alone: the in-view prompt's, while it holds
        idle tokens no request has used (a request's sequence is never idle work's to take,
        and a branch with none holds only what a request read, or a shared prefix)."""
        seq = None if self._in_view is None else self._seqs[self._in_view]
        if seq is None or seq.idle_from is None or seq.idle_from >= len(seq.tokens):
            return None
        return seq.seq_id

    def is_branch(self, seq_id: int) -> bool:
        """Whether a sequence holds idle work no request has used."""
        return self._seqs[seq_id].idle_from is not None

    def extend(self, seq_id: int, tokens: list[int], *, n_logits: int = 1,
               idle: bool = False, in_view: bool = False) -> int:
        """Evaluate ``tokens`` at the end of a sequence and register its new full blocks.

        Makes room first (evicting LRU leaves of other sequences) and again whenever llama.cpp
        reports the cells full. Returns the number of logits rows (see ``Context.decode``).
        Aborts (``DecodeAborted``) keep the chunks evaluated so far. ``idle``: the work of a
        branch (see ``prepare_branch``): its blocks get the idle tier, and it evicts only idle
        leaves (``PromptTooLong`` when that is not enough), unless ``in_view`` (the prompt
        of the document the user is in now): then, once no idle leaf is left, the least
        recently used leaves of requests, as a request would.
        """
        seq = self._seqs[seq_id]
        idle_only = idle and not in_view
        pending = list(tokens)
        rows = 0
        while pending:
            self._make_room(len(pending), protect=seq_id, idle_only=idle_only)
            try:
                rows = self.ctx.decode(pending, len(seq.tokens), seq_id, n_logits=n_logits)
            except KvCacheFull as full:
                self._append(seq, pending[: full.done], idle)
                pending = pending[full.done :]
                if not self._evict_one(protect=seq_id, idle_only=idle_only):
                    raise PromptTooLong("KV cache full and nothing left to evict") from full
                continue
            except BaseException as exc:
                done = getattr(exc, "done", None)
                if done is None:
                    done = max(0, self.ctx.seq_pos_max(seq_id) + 1 - len(seq.tokens))
                self._append(seq, pending[:done], idle)
                raise
            self._append(seq, pending, idle)
            pending = []
        return rows

    def truncate(self, seq_id: int, n: int) -> None:
        """Drop everything after the first ``n`` tokens of a sequence (e.g. rejected drafts)."""
        self._truncate(self._seqs[seq_id], n)

    def clear(self) -> None:
        """Forget everything (the context's KV is cleared too)."""
        self.ctx.clear()
        for seq in self._seqs:
            seq.tokens, seq.keys, seq.idle_from, seq.document = [], [], None, None
        self._blocks.clear()
        self._in_view = None

    def check(self) -> None:
        """Assert the bookkeeping matches llama.cpp's view (for tests)."""
        for seq in self._seqs:
            assert self.ctx.seq_pos_max(seq.seq_id) == len(seq.tokens) - 1, (
                seq.seq_id, self.ctx.seq_pos_max(seq.seq_id), len(seq.tokens))
            assert seq.keys == chain_hashes(seq.tokens, self.block_size)
            for key in seq.keys:
                assert seq.seq_id in self._blocks[key].holders
        for key, block in self._blocks.items():
            assert block.holders, key
            for h in block.holders:
                assert key in self._seqs[h].keys

    ##### Internal Helper Functions #####

    def _find_moved_chunks(self, seq: _Seq, tokens: list[int],
                           n: int) -> list[tuple[int, int, int]]:
        """Runs of ``tokens`` right after ``n`` that ``seq`` holds further on.

        Like llama-server's ``--cache-reuse``: walking the cached tail, each run of at least
        ``shift_min`` tokens that continues the request where the previous one ended is kept.
        Returns (request position, cached position, length) triples.

        NOTE: llama.cpp needs a sequence's positions to stay consecutive, so nothing can be
        evaluated between kept chunks: only text removed from the prompt (a line deleted, a
        window start that moved down, an old chunk of another file dropped) is covered.
        Cells shared with another sequence are never moved (a shift would move them there
        too), so the search starts after the longest prefix another sequence shares.
        """
        old = seq.tokens
        limit = len(tokens) - 1
        chunks: list[tuple[int, int, int]] = []
        shared = max((common_prefix(other.tokens, old) for other in self._seqs
                      if other is not seq), default=0)
        head_p, head_c = n, max(n, shared)
        while head_c < len(old) and head_p < limit:
            m = 0
            while (head_c + m < len(old) and head_p + m < limit
                   and old[head_c + m] == tokens[head_p + m]):
                m += 1
            if m >= self.shift_min:
                chunks.append((head_p, head_c, m))
                head_p += m
                head_c += m
            else:
                head_c += 1
        return chunks

    def _shift_chunks(self, seq: _Seq, tokens: list[int], n: int,
                      chunks: list[tuple[int, int, int]]) -> Prepared:
        """Move each cached chunk left to where the request has it; drop everything else.

        ::

            cached : [ prefix 0..n ][ removed ][ chunk 1 ][ removed ][ chunk 2 ][ old tail ]
            request: [ prefix 0..n ][ chunk 1 ][ chunk 2 ][ new tail, evaluated ]
        """
        for i, j, m in chunks:
            self.ctx.seq_rm(seq.seq_id, i, j)
            self.ctx.seq_add(seq.seq_id, j, j + m, i - j)
        end = chunks[-1][0] + chunks[-1][2]
        self.ctx.seq_rm(seq.seq_id, end, -1)
        self._forget_after(seq, n)
        self._append(seq, tokens[n:end])
        return Prepared(seq.seq_id, end, shifted=end - n)

    def _tick(self) -> float:
        self._clock = max(self._clock + 1e-6, time.monotonic())
        return self._clock

    def _touch(self, seq: _Seq, now: float) -> None:
        seq.last_used = now
        for key in seq.keys:
            block = self._blocks[key]
            block.last_used = now
            block.idle = False

    def _count_idle_used(self, src: _Seq, n: int) -> None:
        """A request reuses the first ``n`` tokens of ``src``: count the idle ones as used."""
        if src.idle_from is not None and n > src.idle_from:
            self.idle_used_tokens += n - src.idle_from
            src.idle_from = n

    def _own_tail(self, seq: _Seq, n: int) -> int:
        """Tokens after position ``n`` that no other sequence holds."""
        bs = self.block_size
        own = len(seq.tokens) - len(seq.keys) * bs
        for i in range(len(seq.keys) - 1, -1, -1):
            if (i + 1) * bs <= n or len(self._blocks[seq.keys[i]].holders) > 1:
                break
            own += bs
        return own

    def _free_seq(self, exclude: int | None) -> _Seq:
        empty = [s for s in self._seqs if not s.tokens and s.seq_id != exclude]
        if empty:
            empty[0].idle_from = None
            return empty[0]
        victims = [s for s in self._seqs if s.seq_id != exclude]
        victim = min(victims, key=lambda s: (s.idle_from is None, s.last_used))
        victim.idle_from = None
        return victim

    def _spare_seq(self, exclude: set[int | None]) -> _Seq | None:
        """An empty sequence, else the least recently used branch, else a stale request
        sequence (see ``_stale_seq``); None when there is none of these."""
        spare = [s for s in self._seqs if s.seq_id not in exclude
                 and (not s.tokens or s.idle_from is not None)]
        if not spare:
            return self._stale_seq(exclude)
        return min(spare, key=lambda s: (bool(s.tokens), s.last_used))

    def _lru_request_seq(self, exclude: set[int | None]) -> _Seq | None:
        """The least recently used sequence other than those in ``exclude`` and the most
        recently used one (the request just answered); None when there is none."""
        newest = max(self._seqs, key=lambda s: s.last_used)
        others = [s for s in self._seqs if s.seq_id not in exclude and s is not newest]
        if not others:
            return None
        victim = min(others, key=lambda s: s.last_used)
        victim.idle_from = None
        return victim

    def _stale_seq(self, exclude: set[int | None]) -> _Seq | None:
        """A request's sequence holding an older state of a prompt: one that holds little of
        its own (other sequences hold the prompt up to near its end: the line before an
        Enter, a branch that was taken and then typed past), or one a later request for the
        same document left behind (the state before an Enter re-read the suffix). Without
        this, every taken branch turns a spare sequence into a request's, and after
        ``n_seq_max`` of them idle work has nowhere to go.

        Never the most recently used sequence or one in ``exclude``, and never one whose own
        tokens (held by no other sequence) are more than a quarter of it and more than two
        blocks, unless it is such an older state: a document's latest prompt stays. The one
        with the fewest own tokens goes first.
        """
        newest = max(self._seqs, key=lambda s: s.last_used)
        stale = []
        for seq in self._seqs:
            if seq.seq_id in exclude or seq is newest or not seq.tokens:
                continue
            own = self._own_tail(seq, 0)
            if own <= max(2 * self.block_size, len(seq.tokens) // 4) or self._left_behind(seq):
                stale.append((own, seq.last_used, seq))
        return min(stale, key=lambda t: t[:2])[2] if stale else None

    def _left_behind(self, seq: _Seq) -> bool:
        """Whether a later request for ``seq``'s document ran in another sequence (that still
        holds it as a request's)."""
        return seq.document is not None and any(
            other.document == seq.document and other.idle_from is None
            and other.requested > seq.requested and other.tokens
            for other in self._seqs if other is not seq)

    def _append(self, seq: _Seq, tokens: list[int], idle: bool = False) -> None:
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
            block = self._blocks.get(key)
            if block is None:
                self._blocks[key] = _Block(len(seq.keys) * bs, {seq.seq_id}, now, idle)
            else:
                block.holders.add(seq.seq_id)
                block.idle = block.idle and idle
            seq.keys.append(key)

    def _truncate(self, seq: _Seq, n: int) -> None:
        if n >= len(seq.tokens):
            return
        self.ctx.seq_rm(seq.seq_id, n, -1)
        self._forget_after(seq, n)

    def _forget_after(self, seq: _Seq, n: int) -> None:
        """Drop tokens from ``n`` on from the bookkeeping (the cells are the caller's job)."""
        del seq.tokens[n:]
        if seq.idle_from is not None and seq.idle_from > n:
            seq.idle_from = n
        keep = n // self.block_size
        for key in seq.keys[keep:]:
            block = self._blocks[key]
            block.holders.discard(seq.seq_id)
            if not block.holders:
                del self._blocks[key]
        del seq.keys[keep:]

    def _make_room(self, n_new: int, protect: int, idle_only: bool = False) -> None:
        while self.used_cells + n_new > self.budget:
            if not self._evict_one(protect, idle_only):
                raise PromptTooLong(f"cannot fit {n_new} more tokens in {self.budget} cells")

    def _evict_one(self, protect: int, idle_only: bool = False) -> bool:
        """Evict the least recently used leaf (a block or a bare partial tail), idle ones first.

        ``idle_only``: only a leaf made by idle work may go, and none of the in-view prompt's
        (for idle work itself, other than that prompt's).
        """
        kept = {protect, self._guarded()} if idle_only else {protect}
        best: tuple[tuple[bool, float], list[_Seq], int] | None = None
        for seq in self._seqs:
            if seq.seq_id in kept or not seq.tokens:
                continue
            tail_start = len(seq.keys) * self.block_size
            tail_idle = seq.idle_from is not None and seq.idle_from <= tail_start
            if seq.keys:
                block = self._blocks[seq.keys[-1]]
                holders = [self._seqs[h] for h in block.holders]
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
        if best is None:
            return False
        _, holders, start = best
        for seq in holders:
            self._truncate(seq, start)
        self.evicted_blocks += 1
        return True


def common_prefix(a: list[int], b: list[int], start: int = 0) -> int:
    """Length of the common prefix of two token lists, comparing from ``start``."""
    n = min(len(a), len(b))
    i = start
    while i < n and a[i] == b[i]:
        i += 1
    return i
