"""Text as LSP positions count it: UTF-16 code units, and the offset of a character in a line.

Plain Python (no numpy, no lsprotocol), shared by the server's document copies
(``document_store``) and the forwarder's (``shared.documents``).
"""

from __future__ import annotations

import re

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
"""LSP's position encodings (``PositionEncodingKind`` values)."""

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def to_units(text: str) -> str:
    """``text`` with each character outside the BMP split into its surrogate pair."""
    if text.isascii() or not _ASTRAL.search(text):
        return text
    return _ASTRAL.sub(lambda m: _split_pair(m.group()), text)


def _split_pair(char: str) -> str:
    code = ord(char) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def from_units(units: str) -> str:
    """Real text from code units: pairs joined, a lone surrogate replaced by U+FFFD."""
    if units.isascii() or not _SURROGATE.search(units):
        return units
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def offset_in_line(line: str, character: int, encoding: str) -> int:
    """How many units of ``line`` (a line's units, without its line end) come before
    ``character`` counted in ``encoding``, clamped to the line."""
    if character <= 0:
        return 0
    if encoding == UTF16 or line.isascii():
        return min(character, len(line))
    real = from_units(line)
    if encoding == UTF8:
        head = real.encode("utf-8")[:character].decode("utf-8", "ignore")
    else:
        head = real[:character]
    return len(to_units(head))
