"""The forwarder's copy of each open document, so a new shared server can be told them all.

The forwarder relays ``didOpen``, ``didChange`` and ``didClose`` and applies each change here
too: when the shared server it talks to goes away, it opens every document in the new one at
the version and text the editor has. UTF-16 code units as the server keeps them, and a
line-start list that an edit cuts back to before the edited line (the server's own
``server/document_store.py`` keeps its index with numpy and its types with lsprotocol, which a
forwarder of a few MB does not load). Positions count in the encoding the server chose at
``initialize`` (UTF-16 unless it said otherwise); lines end at ``\\n``, ``\\r\\n`` or a lone
``\\r``, as in LSP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..server.json_values import lsp_integer
from ..server.text_units import from_units, offset_in_line, to_units

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(slots=True)
class Tracked:
    """One open document as the editor has it."""

    uri: str
    """The document's URI."""
    language_id: str
    """Its ``languageId``."""
    version: int
    """The version of its last change."""
    units: str
    """Its text in UTF-16 code units (``text_units.to_units``), as LSP positions count."""
    starts: list[int] = field(default_factory=lambda: [0])
    """Offsets of the line starts known so far (the first ones; the rest found on demand)."""
    scanned: int = 0
    """How far ``units`` has been searched for line ends."""

    def line_start(self, line: int) -> int:
        """Offset where ``line`` starts; past the last line, the end of the text."""
        while len(self.starts) <= line and self.scanned < len(self.units):
            match = _LINE_END.search(self.units, self.scanned)
            if match is None:
                self.scanned = len(self.units)
                break
            self.scanned = match.end()
            self.starts.append(match.end())
        return self.starts[line] if line < len(self.starts) else len(self.units)

    def offset(self, position: dict, encoding: str) -> int:
        """The offset of an LSP position (clamped to its line and the text, as the server
        does)."""
        line = max(0, lsp_integer(position.get("line", 0)))
        start = self.line_start(line)
        if line >= len(self.starts):
            return len(self.units)
        content = self.units[start:self.line_start(line + 1)].rstrip("\r\n")
        character = lsp_integer(position.get("character", 0))
        return start + offset_in_line(content, character, encoding)

    def apply(self, change: dict, encoding: str) -> None:
        """One ``TextDocumentContentChangeEvent``."""
        new = to_units(str(change.get("text", "")))
        span = change.get("range")
        if span is None:
            self.units, self.starts, self.scanned = new, [0], 0
            return
        start = self.offset(span["start"], encoding)
        end = self.offset(span["end"], encoding)
        if end < start:
            start, end = end, start
        # From the line before the edit: an edit at a line's start can join the line end
        # before it (a lone \r and a new \n). A line past the text is the last line (the
        # offsets above were clamped there, having found every line start).
        line = min(int(span["start"].get("line", 0)), int(span["end"].get("line", 0)))
        keep = max(1, min(line, len(self.starts) - 1))
        self.units = self.units[:start] + new + self.units[end:]
        del self.starts[keep:]
        self.scanned = min(self.scanned, self.starts[-1])

    def opened(self) -> dict:
        """The ``didOpen`` params that open it as it is now."""
        return {"textDocument": {"uri": self.uri, "languageId": self.language_id,
                                 "version": self.version, "text": from_units(self.units)}}


class Documents:
    """The open documents, from the relayed notifications (malformed ones are skipped: the
    server answers for those)."""

    def __init__(self) -> None:
        self.open: dict[str, Tracked] = {}
        """By URI."""
        self.encoding = "utf-16"
        """The position encoding the server chose (``capabilities.positionEncoding``)."""

    def note(self, method: str, params: Any) -> None:
        """Follow one notification from the editor."""
        try:
            doc = params["textDocument"]
            uri = doc["uri"]
            if method == "textDocument/didOpen":
                version = lsp_integer(doc.get("version", 0))
                self.open[uri] = Tracked(uri, str(doc.get("languageId", "")), version,
                                         to_units(str(doc["text"])))
            elif method == "textDocument/didChange" and uri in self.open:
                self._change(self.open[uri], doc, params["contentChanges"])
            elif method == "textDocument/didClose":
                self.open.pop(uri, None)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass

    def _change(self, tracked: Tracked, doc: Any, changes: Any) -> None:
        """A ``didChange``'s changes, all or none: the server refuses a notification with
        any bad part (a version, line or character that is not an LSP integer among them),
        and the copy must stay the server's."""
        version = lsp_integer(doc.get("version", tracked.version))
        before = (tracked.units, list(tracked.starts), tracked.scanned)
        try:
            for change in changes:
                tracked.apply(change, self.encoding)
        except (KeyError, TypeError, ValueError, AttributeError):
            tracked.units, tracked.starts, tracked.scanned = before
            raise
        tracked.version = version
