"""Which lines a ``didChange`` touched, for the record of recent edits."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

WHOLE = (0, 1 << 30)
"""What a change of the whole document (or one across lines) reports: first != last."""


def changed_lines(changes: Sequence[types.TextDocumentContentChangeEvent]) -> tuple[int, int]:
    """(first, last) line the changes touched, as they are after them: equal for typing on
    one line, different for a change across lines (a new line, a paste, a deleted line break,
    a formatter, several places at once) or of the whole document."""
    first = last = None
    for change in changes:
        if not isinstance(change, types.TextDocumentContentChangePartial):
            return WHOLE
        start, end = change.range.start.line, change.range.end.line
        if start != end or "\n" in change.text or "\r" in change.text:
            return WHOLE
        first = start if first is None else min(first, start)
        last = start if last is None else max(last, start)
    return (0, 0) if first is None or last is None else (first, last)
