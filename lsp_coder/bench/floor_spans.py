"""The quality floor's items: mid-line spans of real files, cut between words, drawn by a seed.

A file of the language is drawn, then a line of code in it (not a comment, not inside a comment
or string that spans lines), then a start at a word boundary after the indentation and an end at
a later word boundary before any comment that closes the line.
"""

from __future__ import annotations

import os
import random
import sysconfig
from dataclasses import dataclass
from pathlib import Path

LANGUAGES = {".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".c": "c",
             ".h": "c", ".py": "python"}
"""File suffix -> LSP language id."""

DEFAULT_ROOTS = {
    "javascript": ("/usr/lib/node_modules", "/usr/share/nodejs", "/usr/share/javascript"),
    "c": ("/usr/include",),
    "python": (sysconfig.get_paths()["stdlib"],),
}
"""Where files of each language are looked for when none are given."""

SKIPPED_DIRS = {"test", "tests", "__pycache__", "site-packages", "dist-packages", ".git"}
"""Folders not walked: test data and installed packages are not what a user writes."""

MAX_FILES_SCANNED = 4000
"""Files listed per language before the seeded draw (the walk stays bounded)."""

FILE_BYTES = (2_000, 200_000)
"""A drawn file's size bounds: big enough to have context, not a bundle."""

LINE_CHARS = (16, 160)
"""A drawn line's length without indentation."""

COMMENT_STARTS = ("#", "//", "/*", "*", '"', "'")
"""A line starting so is a comment or a string: not drawn."""

BLOCKS = {"python": (('"""', '"""'), ("'''", "'''")), "javascript": (("/*", "*/"),),
          "c": (("/*", "*/"),)}
"""Per language, the delimiters of comments and strings that span lines."""

LINE_COMMENT = {"python": "#", "javascript": "//", "c": "//"}
"""Per language, what starts a comment to the end of the line."""


@dataclass(frozen=True, slots=True)
class Span:
    """One item: ``text[offset:offset + len(expected)]`` was cut out."""

    path: str
    """The file."""
    language: str
    """Its LSP language id."""
    text: str
    """The file without the span."""
    offset: int
    """Where the span was (a str index into ``text``): the cursor."""
    expected: str
    """The span's text."""


def find_files(language: str, roots: tuple[str, ...]) -> list[Path]:
    """Files of ``language`` under ``roots`` in a stable order (at most MAX_FILES_SCANNED)."""
    out: list[Path] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
            for name in sorted(files):
                path = Path(folder) / name
                if LANGUAGES.get(path.suffix) == language and not name.endswith(".min.js"):
                    out.append(path)
                    if len(out) >= MAX_FILES_SCANNED:
                        return out
    return out


def _boundaries(line: str, start: int) -> list[int]:
    """Positions from ``start`` on that do not fall inside a word."""
    return [i for i in range(start, len(line) + 1)
            if i == len(line) or not (line[i - 1].isalnum() or line[i - 1] == "_")
            or not (line[i].isalnum() or line[i] == "_")]


def code_lines(lines: list[str], language: str) -> list[int]:
    """The lines that begin outside a comment or string spanning lines and are not comment
    lines themselves (a delimiter inside a one-line string may fool it: rare, harmless)."""
    out = []
    closing = None
    for i, line in enumerate(lines):
        inside = closing is not None
        pos = 0
        while True:
            if closing is not None:
                end = line.find(closing, pos)
                if end < 0:
                    break
                pos, closing = end + len(closing), None
                continue
            found = [(line.find(a, pos), a, b) for a, b in BLOCKS.get(language, ())]
            found = [f for f in found if f[0] >= 0]
            if not found:
                break
            at, opening, closing = min(found)
            pos = at + len(opening)
        if not inside and not line.strip().startswith(COMMENT_STARTS):
            out.append(i)
    return out


def _code_end(line: str, language: str) -> int:
    """Where the line's code ends: before a comment that closes the line."""
    ends = [line.find(m) for m in (LINE_COMMENT.get(language, ""),
                                   *(a for a, _ in BLOCKS.get(language, ()))) if m]
    ends = [e for e in ends if e > 0]
    return min(ends, default=len(line))


def cut_span(path: Path, language: str, rng: random.Random) -> Span | None:
    """A span of one drawn line of ``path`` (None when the file has no usable line)."""
    try:
        if not FILE_BYTES[0] <= path.stat().st_size <= FILE_BYTES[1]:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    candidates = [i for i in code_lines(lines, language)
                  if LINE_CHARS[0] <= len(lines[i].strip()) <= LINE_CHARS[1]]
    if not candidates:
        return None
    i = rng.choice(candidates)
    line = lines[i]
    indent = len(line) - len(line.lstrip())
    code_end = _code_end(line, language)
    starts = [b for b in _boundaries(line, indent + 1) if b <= code_end - 4]
    if not starts:
        return None
    start = rng.choice(starts)
    ends = [b for b in _boundaries(line, start + 3) if line[start:b].strip() and b <= code_end]
    if not ends:
        return None
    end = rng.choice(ends)
    line_start = sum(len(x) + 1 for x in lines[:i])
    return Span(str(path), language, text[: line_start + start] + text[line_start + end :],
                line_start + start, line[start:end])


def draw_spans(files_by_language: dict[str, list[Path]], per_language: int,
               seed: int) -> list[Span]:
    """``per_language`` spans of each language, one per file, by a seeded draw."""
    spans: list[Span] = []
    for language, files in files_by_language.items():
        rng = random.Random(f"{seed}:{language}")
        order = sorted(files)
        rng.shuffle(order)
        taken = 0
        for path in order:
            if taken >= per_language:
                break
            span = cut_span(path, language, rng)
            if span is not None:
                spans.append(span)
                taken += 1
    return spans
