"""Small text helpers shared by the sources of other files' context."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Generic, TypeVar
from urllib.parse import unquote, urlparse

from cachetools import LRUCache

T = TypeVar("T")

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

def identifiers(text: str) -> list[str]:
    """The identifiers of ``text`` in order (a word-level scan, no language rules)."""
    return IDENTIFIER.findall(text)


def trim_lines(text: str, budget_chars: int, focus_line: int = 0) -> str:
    """Whole lines of ``text`` within ``budget_chars``, taken nearest ``focus_line`` first.

    The lines kept are contiguous and in their order; nothing is cut inside a line, so a
    focus line longer than the budget leaves nothing.
    """
    if len(text) <= budget_chars:
        return text
    lines = text.splitlines(keepends=True)
    if not lines:
        return ""
    focus = max(0, min(focus_line, len(lines) - 1))
    if len(lines[focus]) > budget_chars:
        return ""
    lo, hi, used = focus, focus + 1, len(lines[focus])
    while True:
        below = lines[hi] if hi < len(lines) else None
        above = lines[lo - 1] if lo > 0 else None
        # The nearer side first; below wins a tie (what follows a signature is its body).
        take_below = below is not None and (above is None or hi - focus <= focus - lo + 1)
        line = below if take_below else above
        if line is None or used + len(line) > budget_chars:
            break
        used += len(line)
        if take_below:
            hi += 1
        else:
            lo -= 1
    return "".join(lines[lo:hi])


BINARY_PROBE_BYTES = 8192
"""A file with a NUL byte in this many first bytes is binary (never shown)."""


def file_stamp(file: Path) -> tuple[int, int] | None:
    """(size, mtime_ns) of ``file``, to tell whether it changed; None when it is gone."""
    try:
        st = file.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def source_bytes(file: Path, size: int, max_bytes: int) -> bytes | None:
    """The bytes of ``file`` (of ``size`` bytes), or None when it is larger than
    ``max_bytes``, cannot be read or is binary."""
    if size > max_bytes:
        return None
    try:
        data = file.read_bytes()
    except OSError:
        return None
    return None if b"\0" in data[:BINARY_PROBE_BYTES] else data


class FileReads(Generic[T]):
    """What ``derive`` makes of each file's bytes, made again only when the file's size or
    modification time changes; None for a file that is gone, larger than ``max_bytes``,
    unreadable or binary. The ``maxsize`` files used last are kept. Not thread-safe."""

    def __init__(self, max_bytes: int, derive: Callable[[Path, bytes], T], maxsize: int) -> None:
        self._max_bytes = max_bytes
        self._derive = derive
        self._kept: LRUCache[Path, tuple[tuple[int, int], T | None]] = LRUCache(maxsize)

    def get(self, file: Path) -> T | None:
        stamp = file_stamp(file)
        if stamp is None:
            return None
        kept = self._kept.get(file)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        data = source_bytes(file, stamp[0], self._max_bytes)
        value = None if data is None else self._derive(file, data)
        self._kept[file] = (stamp, value)
        return value


def uri_to_path(uri: str) -> Path | None:
    """The file system path of a ``file:`` URI (None for other schemes)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def display_path(path: Path, roots: tuple[Path, ...]) -> str:
    """``path`` relative to the first workspace folder that holds it, else its name."""
    for root in roots:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            continue
    return path.name
