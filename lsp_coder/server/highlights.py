"""``textDocument/documentHighlight``: the other occurrences of the word at the cursor.

What VS Code computes itself for a file no server offers highlights for (its textual
fallback). The server offers the request because VS Code and recent Emacs eglot versions send
it wherever the cursor comes to rest: that tells idle work where the next completion request
will probably be. The VS Code extension does not show this answer, so there the language's own
server keeps the highlights.
"""

from __future__ import annotations

import re

from lsprotocol import types

from .document_store import Document
from .words import word_end, word_start

SCAN_UNITS = 100_000
"""How far before and after the cursor occurrences are looked for (a 5 MB file is not scanned
whole on every cursor move)."""

MAX_HIGHLIGHTS = 1000


def word_highlights(doc: Document, position: types.Position) -> list[types.DocumentHighlight]:
    """Text highlights of the identifier at (or just before) ``position``; [] for none."""
    units = doc.units
    offset = doc.unit_offset(position)
    word = units[word_start(units, 0, offset) : word_end(units, offset)]
    if not word or word[0].isdigit():
        return []
    width = doc.client_units(word)  # no surrogate is a word character: units are characters
    pattern = re.compile(r"(?<!\w)" + re.escape(word) + r"(?!\w)")
    out: list[types.DocumentHighlight] = []
    lo, hi = max(0, offset - SCAN_UNITS), min(len(units), offset + SCAN_UNITS)
    for match in pattern.finditer(units, lo, hi):
        start = doc.position(match.start())
        end = types.Position(line=start.line, character=start.character + width)
        out.append(types.DocumentHighlight(range=types.Range(start=start, end=end),
                                           kind=types.DocumentHighlightKind.Text))
        if len(out) >= MAX_HIGHLIGHTS:
            break
    return out
