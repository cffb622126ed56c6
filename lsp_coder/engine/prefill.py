"""Idle-time prefill: evaluate a prompt likely to be needed next onto a spare sequence.

The completion layer decides what will be needed next; this module only makes the prefix cache
hold it. The work runs in small chunks at the lowest priority: it shares the cached prefix into
a spare sequence (``PrefixCache.prepare_branch``), its blocks are the first to be evicted, it
never evicts a request's blocks, and ``cancelled`` stops it within the running ubatch (the
chunks done so far stay cached). A remote backend implements the same operation as a
prefill-only request.
"""

from __future__ import annotations

import time
from typing import Callable

from ..shared_types import PrefillResult
from .llama_context import DecodeAborted
from .prefix_cache.manager import PrefixCache, PromptTooLong


def prefill(cache: PrefixCache, tokens: list[int], cancelled: Callable[[], bool],
            chunk_tokens: int = 64,
            stop: Callable[[], bool] = lambda: False, in_view: bool = False,
            document: str | None = None) -> PrefillResult:
    """Make ``cache`` hold ``tokens`` on a branch sequence, stoppable at any ubatch.

    Args:
        cache: the target model's prefix cache (worker thread only).
        tokens: the prompt (or the part of it that is known).
        cancelled: polled before every chunk and by llama.cpp's abort callback during one.
        chunk_tokens: tokens per decode call; an abort loses at most the running one.
        stop: polled before every chunk only: the running chunk finishes and stays cached
            (for a request that will read it anyway).
        in_view: the prompt of the document the user is in now: when no spare sequence or
            idle block is left it may take the least recently used request's room (see
            ``PrefixCache.prepare_branch``).
        document: the document the prompt is for (see ``PrefixCache.prepare``).

    Returns:
        What was done; nothing raises for a cancelled or impossible prefill.
    """
    start = time.perf_counter()
    ctx = cache.ctx
    if not tokens:
        return PrefillResult("cached", 0)
    try:
        prepared = cache.prepare_branch(tokens, in_view=in_view, document=document)
    except PromptTooLong:
        return PrefillResult("no_room", len(tokens))
    if prepared is None:
        return PrefillResult("no_room", len(tokens))
    if prepared.reused == len(tokens):
        return PrefillResult("cached", len(tokens), prepared.reused)
    seq = prepared.seq_id
    done = prepared.reused
    outcome = "done"
    ctx.cancel_check = cancelled
    try:
        while done < len(tokens):
            if cancelled() or stop():
                outcome = "cancelled"
                break
            chunk = tokens[done : done + max(1, chunk_tokens)]
            # No logits are read: the request that takes the branch evaluates its last token.
            cache.extend(seq, chunk, n_logits=0, idle=True, in_view=in_view)
            done += len(chunk)
    except DecodeAborted:
        outcome = "cancelled"
    except PromptTooLong:
        outcome = "no_room"
    finally:
        ctx.cancel_check = None
    held = len(cache.tokens(seq))
    return PrefillResult(outcome, len(tokens), prepared.reused,
                         max(0, held - prepared.reused),
                         (time.perf_counter() - start) * 1000)
