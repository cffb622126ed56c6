"""Small text helpers shared by the sources of other files' context."""

from __future__ import annotations

import os
import re
import stat
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
    """(size, mtime_ns) of ``file``, to tell whether it changed; None when it is gone or not
    a regular file (a FIFO, a device, a socket, a folder)."""
    try:
        st = file.stat()
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0))


def read_regular(file: Path, max_bytes: int) -> bytes | None:
    """The bytes of ``file`` when it is a regular file of at most ``max_bytes`` and not
    binary; None otherwise (gone, unreadable, too large, binary, or not a regular file).

    Never waits on the file: only a regular file is opened (``stat`` first), opened without
    blocking and checked again once open (``fstat``: it may have been replaced by a FIFO in
    between), so a FIFO, a device or a socket is never read (a FIFO's read waited for a
    writer). A file on a hung network mount can still hang in ``stat``: the other files'
    section is built under a deadline for that (``bounded.BoundedCalls``).
    """
    try:
        if not stat.S_ISREG(file.stat().st_mode):
            return None
        fd = os.open(file, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes or b"\0" in data[:BINARY_PROBE_BYTES]:
        return None
    return data


UNSAVED_KEPT = 16
"""``FileReads.unsaved``: what was made of this many unsaved texts is kept (by the text)."""


class FileReads(Generic[T]):
    """What ``derive`` makes of each file's bytes, made again only when the file's size or
    modification time changes; None for a file that is gone, larger than ``max_bytes``,
    unreadable, binary or not a regular file (``read_regular``), and for one ``allows``
    refuses (``exclusion``: never read). The ``maxsize`` files used last are kept. Not
    thread-safe."""

    def __init__(self, max_bytes: int, derive: Callable[[Path, bytes], T], maxsize: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self._max_bytes = max_bytes
        self._derive = derive
        self._allows = allows
        self._kept: LRUCache[Path, tuple[tuple[int, int], T | None]] = LRUCache(maxsize)
        self._unsaved: LRUCache[tuple[Path, str], T | None] = LRUCache(UNSAVED_KEPT)

    def unsaved(self, file: Path, text: str) -> T | None:
        """What ``derive`` makes of ``text``, the unsaved content of ``file`` open in the
        editor (None where ``get`` would give None for its size or ``allows``)."""
        key = (file, text)
        if key not in self._unsaved:
            data = text.encode("utf-8", "replace")
            self._unsaved[key] = (self._derive(file, data) if self._allows(file)
                                  and len(data) <= self._max_bytes else None)
        return self._unsaved[key]

    def get(self, file: Path) -> T | None:
        if not self._allows(file):
            return None
        stamp = file_stamp(file)
        if stamp is None:
            return None
        kept = self._kept.get(file)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        data = read_regular(file, self._max_bytes)
        value = None if data is None else self._derive(file, data)
        self._kept[file] = (stamp, value)
        return value


def uri_to_path(uri: str) -> Path | None:
    """The file system path of a ``file:`` URI (None for other schemes)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(name: str) -> str:
    """``name`` with each control character (a line break above all) written as ``%XX``: a
    path or a folder name in the prompt stays on its own line (a file named ``a\\nimport os``
    would otherwise put a line of code in the repository format)."""
    return _UNPRINTABLE.sub(lambda m: f"%{ord(m.group()):02X}", name)


def display_uri(uri: str, roots: tuple[Path, ...]) -> str:
    """The path a prompt writes for document ``uri``: its file's ``display_path``, else the
    URI's last segment (an untitled document)."""
    path = uri_to_path(uri)
    return display_path(path, roots) if path is not None else one_line(uri.rsplit("/", 1)[-1])


def display_path(path: Path, roots: tuple[Path, ...]) -> str:
    """``path`` relative to the first workspace folder that holds it, else its name, on one
    line (``one_line``)."""
    for root in roots:
        try:
            return one_line(path.relative_to(root).as_posix())
        except ValueError:
            continue
    return one_line(path.name)
