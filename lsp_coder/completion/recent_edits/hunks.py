"""The changed regions between two texts of a document, and how a prompt shows them.

A hunk is found by a line diff of the text when tracking began (``base``) against the text at
the last finished edit, so an edit that is undone leaves no hunk. The diff is bounded: the
common first and last lines are set aside in linear time, and a middle longer than
``DIFF_LINES_MAX`` lines on either side (a formatter run, a file replaced) is not diffed at
all (``None``: the caller starts again from the new text).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from ..related.text import BINARY_PROBE_BYTES

DOCUMENT_CHARS_MAX = 262_144
"""A document larger than this is not shown (a log, a data file, a 1 MB paste)."""

Text = Callable[[], str]
"""Reads a document's current text (called only when an edit or a visit finishes)."""

DIFF_LINES_MAX = 2000
"""A changed middle longer than this many lines (either side) is not diffed."""

CHANGED_LINES_MAX = 300
"""Hunks that change more lines than this in all are a wholesale change, not an edit."""

HUNKS_MAX = 24
"""More hunks than this in one document are not one edit either (and keep each diff cheap:
the record then starts from the text before the last edit)."""

CONTEXT_LINES = 3
"""Unchanged lines shown around a hunk (the region as it is now)."""

HUNK_LINES_MAX = 16
"""A hunk's region is cut to this many lines (its first ones: a definition's head)."""

LINE_CHARS_MAX = 240
"""A shown line longer than this is cut (minified code, a long literal)."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """One changed region of a document."""

    start: int
    """Its first line in the new text (0-based)."""
    end: int
    """The line after its last in the new text (``start`` for lines only removed)."""
    old: tuple[str, ...]
    """The lines it replaced in the base text."""
    new: tuple[str, ...]
    """Its lines in the new text."""
    stamp: int
    """When it last changed (a counter shared by a session's documents; larger is newer)."""

    @property
    def change(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What it changed, wherever it now is (equal changes keep their stamp)."""
        return self.old, self.new


def document_lines(text: str) -> list[str] | None:
    """``text``'s lines, or None when it is not shown (too big, binary-looking)."""
    if len(text) > DOCUMENT_CHARS_MAX or "\x00" in text[:BINARY_PROBE_BYTES]:
        return None
    return text.split("\n")


def diff_hunks(base: list[str], new: list[str]) -> list[tuple[int, int, tuple[str, ...],
                                                              tuple[str, ...]]] | None:
    """(start, end, old lines, new lines) per changed region of ``base`` -> ``new`` (lists of
    lines), in order; None when the change is too big to be an edit (see the module
    docstring, ``CHANGED_LINES_MAX`` and ``HUNKS_MAX``)."""
    head = 0
    limit = min(len(base), len(new))
    while head < limit and base[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and base[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_mid = base[head : len(base) - tail]
    new_mid = new[head : len(new) - tail]
    if not old_mid and not new_mid:
        return []
    if len(old_mid) > DIFF_LINES_MAX or len(new_mid) > DIFF_LINES_MAX:
        return None
    out = []
    changed = 0
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed += max(i2 - i1, j2 - j1)
        if changed > CHANGED_LINES_MAX or len(out) >= HUNKS_MAX:
            return None
        out.append((head + j1, head + j2, tuple(old_mid[i1:i2]), tuple(new_mid[j1:j2])))
    return out


def region(hunk: Hunk, lines: list[str]) -> tuple[int, int]:
    """The lines of ``lines`` (the new text) a prompt shows for ``hunk``: the hunk and
    ``CONTEXT_LINES`` around it, at most ``HUNK_LINES_MAX``."""
    lo = max(0, hunk.start - CONTEXT_LINES)
    hi = min(len(lines), max(hunk.end, hunk.start + 1) + CONTEXT_LINES)
    return lo, min(hi, lo + HUNK_LINES_MAX)


def render(regions: list[tuple[int, int]], lines: list[str]) -> str:
    """The text of ``regions`` of ``lines`` (sorted; overlapping ones merged), separated by a
    line of ``...``, long lines cut to ``LINE_CHARS_MAX``."""
    merged: list[list[int]] = []
    for lo, hi in sorted(regions):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    pieces = []
    for lo, hi in merged:
        pieces.append("\n".join(line[:LINE_CHARS_MAX] for line in lines[lo:hi]))
    return "\n...\n".join(pieces)
