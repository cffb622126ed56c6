"""The server's copy of each open document, kept equal to the client's under any edit.

Text is held in UTF-16 code units (a character outside the BMP is stored as its two surrogate
code points), so an LSP position is an index, an edit that splits a surrogate pair splits it
exactly as the client's UTF-16 string does, and the text handed to the completion layer is
re-joined (a lone surrogate becomes U+FFFD). Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``
(LSP's rule, not ``str.splitlines``'s). Positions past a line's end or the document's end are
clamped and a reversed range is swapped, as in VS Code's own ``TextDocument``. Line starts are
kept incrementally, so an edit costs the edit plus a shift of the later line starts.
"""

from __future__ import annotations

import numpy as np
from lsprotocol import types

from ..completion.context import one_line_end
from .text_units import from_units, offset_in_line, to_units

INDEX_STEP_UNITS = 1 << 20
"""How many units one step of building a line index scans (a few ms; see ``index_step``)."""


def _line_starts(units: str, base: int = 0) -> np.ndarray:
    """Offsets (plus ``base``) just after each line break in ``units``, in order."""
    if units.isascii():
        raw = np.frombuffer(units.encode("ascii"), dtype=np.uint8)
    else:  # one uint16 per unit: the units are UTF-16 code units already
        raw = np.frombuffer(units.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
    starts = np.flatnonzero(raw == 10)
    if "\r" in units:
        returns = np.flatnonzero(raw == 13)
        followed = returns + 1 < len(raw)
        lone = returns[~followed | (raw[np.minimum(returns + 1, len(raw) - 1)] != 10)]
        starts = np.sort(np.concatenate((starts, lone)))
    starts += base + 1
    return starts.astype(np.int64, copy=False)


class Document:
    """One open document: its text in UTF-16 units, line starts, version and language."""

    def __init__(self, uri: str, text: str, version: int, language_id: str,
                 encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.uri = uri
        self.version = version
        self.language_id = language_id
        self.encoding = encoding
        self._units = to_units(text)
        self._line_index: np.ndarray | None = None  # built in steps, or on first use
        self._index_parts: list[np.ndarray] = []
        self._indexed = 0  # units scanned by the steps so far

    @property
    def text(self) -> str:
        """The document as the completion layer sees it: real characters, a lone ``\\r``
        line end as ``\\n`` (``one_line_end``: offsets hold)."""
        return one_line_end(from_units(self._units))

    @property
    def units(self) -> str:
        """The document in UTF-16 code units (what the client holds)."""
        return self._units

    @property
    def _starts(self) -> np.ndarray:
        """Line k (k >= 1) starts at ``_starts[k - 1]``."""
        while self._line_index is None:
            self.index_step(len(self._units))
        return self._line_index

    def index_step(self, units: int = INDEX_STEP_UNITS) -> bool:
        """Scan the next ``units`` units for line starts; True once the index is complete.

        Called repeatedly from the event loop, this builds a big document's index without one
        long block (5 MB take about 20 ms in one go here).
        """
        if self._line_index is not None:
            return True
        lo = self._indexed
        hi = min(len(self._units), lo + units)
        # A start at p depends on the units at p - 1 and p, so the slice reaches one unit
        # past ``hi`` and only starts up to ``hi`` are kept.
        found = _line_starts(self._units[lo : hi + 1], lo)
        self._index_parts.append(found[found <= hi])
        self._indexed = hi
        if hi == len(self._units):
            self._line_index = np.concatenate(self._index_parts)
            self._index_parts = []
        return self._line_index is not None

    def _reset_index(self) -> None:
        self._line_index = None
        self._index_parts = []
        self._indexed = 0

    @property
    def line_count(self) -> int:
        return len(self._starts) + 1

    # -- positions ------------------------------------------------------------------------------

    def _line_bounds(self, line: int) -> tuple[int, int]:
        """Start and end (before the line break) of ``line`` in units."""
        start = 0 if line == 0 else int(self._starts[line - 1])
        if line < len(self._starts):
            end = int(self._starts[line]) - 1
            if end > start and self._units[end] == "\n" and self._units[end - 1] == "\r":
                end -= 1
        else:
            end = len(self._units)
        return start, end

    def unit_offset(self, position: types.Position) -> int:
        """``position`` as an offset into the units, clamped to the line and the document."""
        if position.line >= self.line_count:
            return len(self._units)
        start, end = self._line_bounds(position.line)
        if position.character <= 0:
            return start
        if self.encoding == types.PositionEncodingKind.Utf16:
            return min(start + position.character, end)
        return start + offset_in_line(self._units[start:end], position.character, self.encoding)

    def clamp(self, position: types.Position) -> types.Position:
        """The position the client means: past a line's end is its end, past the document's
        end is the document's end."""
        return self.position(self.unit_offset(position))

    def position(self, offset: int) -> types.Position:
        """The LSP position of ``offset`` (an index into the units), in the client's units."""
        line = int(np.searchsorted(self._starts, offset, side="right"))
        start = 0 if line == 0 else int(self._starts[line - 1])
        return types.Position(line=line, character=self.client_units(
            from_units(self._units[start:offset])))

    def text_offset(self, position: types.Position) -> int:
        """``position`` as an index into ``text`` (real characters)."""
        offset = self.unit_offset(position)
        if self._units.isascii():
            return offset
        return len(from_units(self._units[:offset]))

    def client_units(self, text: str) -> int:
        """How many position units of the client's encoding ``text`` (real characters) spans."""
        if text.isascii() or self.encoding == types.PositionEncodingKind.Utf32:
            return len(text)
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(text.encode("utf-8", "replace"))
        return len(to_units(text))

    # -- edits ----------------------------------------------------------------------------------

    def apply(self, change: types.TextDocumentContentChangeEvent) -> None:
        """Apply one change (a range edit, or the whole text)."""
        new = to_units(change.text)
        if not isinstance(change, types.TextDocumentContentChangePartial):
            self._units = new
            self._reset_index()
            return
        start = self.unit_offset(change.range.start)
        end = self.unit_offset(change.range.end)
        if end < start:
            start, end = end, start
        self._replace(start, end, new)

    def _replace(self, start: int, end: int, new: str) -> None:
        starts = self._starts
        old = self._units
        self._units = "".join((old[:start], new, old[end:]))
        delta = len(new) - (end - start)
        # A line start p depends on the units at p - 1 and p: starts up to `start - 1` are
        # untouched, starts after `end` only shift, those in between are found again.
        lo = int(np.searchsorted(starts, start, side="left"))
        hi = int(np.searchsorted(starts, end, side="right"))
        lo_text = max(0, start - 1)
        found = _line_starts(self._units[lo_text : start + len(new) + 1], lo_text)
        found = found[(found >= start) & (found <= start + len(new))]
        self._line_index = np.concatenate((starts[:lo], found, starts[hi:] + delta))


class DocumentStore:
    """The open documents by URI."""

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}
        self.encoding: str = types.PositionEncodingKind.Utf16

    def open(self, item: types.TextDocumentItem) -> None:
        self._docs[item.uri] = Document(item.uri, item.text, item.version, item.language_id,
                                        self.encoding)

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def close(self, uri: str) -> bool:
        return self._docs.pop(uri, None) is not None

    def __contains__(self, uri: str) -> bool:
        return uri in self._docs

    def uris(self) -> list[str]:
        return list(self._docs)
