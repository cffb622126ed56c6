"""A client-side model of a UTF-16 editor's document, to check the server's copy against."""

from __future__ import annotations

from lsp_coder.server.text_units import to_units


class ClientDocument:
    """What a UTF-16 client holds after the same edits (vscode-languageserver-textdocument's
    rules: a reversed range is swapped, positions clamp to the line and the document)."""

    def __init__(self, text: str) -> None:
        self.units = to_units(text)

    def _line_offsets(self) -> list[int]:
        offsets = [0]
        i, u = 0, self.units
        while i < len(u):
            if u[i] == "\r":
                if i + 1 < len(u) and u[i + 1] == "\n":
                    i += 1
                offsets.append(i + 1)
            elif u[i] == "\n":
                offsets.append(i + 1)
            i += 1
        return offsets

    def offset_at(self, line: int, character: int) -> int:
        offsets = self._line_offsets()
        if line >= len(offsets):
            return len(self.units)
        start = offsets[line]
        nxt = offsets[line + 1] if line + 1 < len(offsets) else len(self.units)
        offset = min(start + character, nxt)
        while offset > start and self.units[offset - 1] in "\r\n":
            offset -= 1
        return offset

    def edit(self, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        a, b = self.offset_at(*start), self.offset_at(*end)
        a, b = min(a, b), max(a, b)
        self.units = self.units[:a] + to_units(text) + self.units[b:]
