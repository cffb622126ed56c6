"""Code the user pins into every prompt's section (``context.pinned``), and what it counts
against the section's budget."""

from __future__ import annotations

from .text import one_line

PINNED_CHARS_PER_TOKEN = 2
"""Pinned code is never cut: it counts against the budget at this many characters a token,
fewer than code takes, so that the prompt's real tokens hold it whole (the sources give way)."""


def pinned_tokens(entries: tuple[tuple[str, str], ...]) -> int:
    """What pinned entries (path and text) count against ``context.budget_tokens``."""
    return -(-sum(len(p) + len(t) for p, t in entries) // PINNED_CHARS_PER_TOKEN)


def pinned_entries(pinned: list[str]) -> tuple[tuple[str, str], ...]:
    """``context.pinned`` as (path, text) entries: each entry's first line is the path (one
    without a path or a text is left out)."""
    out = []
    for entry in pinned:
        path, _, text = entry.partition("\n")
        if path.strip() and text.strip():
            out.append((one_line(path.strip()), text))
    return tuple(out)
