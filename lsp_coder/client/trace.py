"""Keystroke traces: real source files with a few lines cut out, typed back one key at a time."""

from __future__ import annotations

import sysconfig
from dataclasses import dataclass
from pathlib import Path

DEFAULT_FILES = ("textwrap.py", "shlex.py", "heapq.py")
"""Standard-library modules: real code that is on every machine and in no test fixture."""


@dataclass(frozen=True, slots=True)
class Trace:
    """Type ``typed`` at ``offset`` of ``text`` (the file with those characters cut out)."""

    path: Path
    text: str
    offset: int
    typed: str

    @property
    def uri(self) -> str:
        return self.path.resolve().as_uri()


def default_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [stdlib / name for name in DEFAULT_FILES if (stdlib / name).is_file()]


def cut_lines(source: str, lines: int, at: float = 0.6) -> tuple[str, str, int]:
    """Cut ``lines`` non-blank lines out of ``source``: (text with the hole, cut, offset).

    The cut begins at the first indented code line from ``at`` of the way down, so the typing
    happens where a completion engine has context above and below; the newline after the
    last cut line stays.
    """
    all_lines = source.splitlines(keepends=True)
    first = int(len(all_lines) * at)
    while first < len(all_lines) - 1 and not (
            all_lines[first].startswith("    ") and all_lines[first].strip()
            and not all_lines[first].strip().startswith(("#", '"', "'"))):
        first += 1
    last, code = first, 0
    while last < len(all_lines) and code < lines:
        code += bool(all_lines[last].strip())
        last += 1
    cut = "".join(all_lines[first:last]).rstrip("\n")
    offset = sum(len(s) for s in all_lines[:first])
    return source[:offset] + source[offset + len(cut) :], cut, offset


def make_trace(path: Path, lines: int, at: float = 0.6) -> Trace:
    """A trace that types ``lines`` lines of ``path`` back in (see ``cut_lines``)."""
    text, cut, offset = cut_lines(path.read_text(encoding="utf-8"), lines, at)
    return Trace(path, text, offset, cut)
