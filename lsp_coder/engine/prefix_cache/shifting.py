"""Shifted reuse (llama-server's ``--cache-reuse``): cached runs that now sit elsewhere."""

from __future__ import annotations


def find_moved_chunks(old: list[int], tokens: list[int], n: int, shared: int,
                      shift_min: int) -> list[tuple[int, int, int]]:
    """Runs of ``tokens`` right after ``n`` that ``old`` (a sequence's tokens) holds further on.

    Walking the cached tail, each run of at least ``shift_min`` tokens that continues the
    request where the previous one ended is kept. Returns (request position, cached position,
    length) triples.

    NOTE: llama.cpp needs a sequence's positions to stay consecutive, so nothing can be
    evaluated between kept chunks: only text removed from the prompt (a line deleted, a window
    start that moved down, an old chunk of another file dropped) is covered. Cells shared with
    another sequence are never moved (a shift would move them there too), so the search starts
    after ``shared``, the longest prefix another sequence holds.
    """
    limit = len(tokens) - 1
    chunks: list[tuple[int, int, int]] = []
    head_p, head_c = n, max(n, shared)
    while head_c < len(old) and head_p < limit:
        m = 0
        while (head_c + m < len(old) and head_p + m < limit
               and old[head_c + m] == tokens[head_p + m]):
            m += 1
        if m >= shift_min:
            chunks.append((head_p, head_c, m))
            head_p += m
            head_c += m
        else:
            head_c += 1
    return chunks


def common_prefix(a: list[int], b: list[int], start: int = 0) -> int:
    """Length of the common prefix of two token lists, comparing from ``start``."""
    n = min(len(a), len(b))
    i = start
    while i < n and a[i] == b[i]:
        i += 1
    return i
