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


def make_trace(path: Path, lines: int, at: float = 0.6) -> Trace:
    """Cut ``lines`` non-blank lines starting inside a function body at fraction ``at``.

    The cut begins at the first indented code line from ``at`` of the way down, so the typing
    happens where a completion engine has context above and below.
    """
    source = path.read_text(encoding="utf-8")
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
    return Trace(path, source[:offset] + source[offset + len(cut) :], offset, cut)
