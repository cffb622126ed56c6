"""The open file's imports, for its prompt when the window above the cursor starts below them.

Far down a long file the model sees neither the ``import`` lines nor what they bring in, so it
guesses a module's name (``asyncio.`` for ``events.``) or a method for an imported function.
The import lines are few and change seldom: they go at the window's front (see
``local_prompt.build_prompt``) and keep the KV cache as the window does.

Python by its line starts (a file being edited often does not parse; a statement in
parentheses or after a backslash continues); JavaScript and TypeScript by the tree-sitter
parse of ``js_imports``; C and C++ by their ``#include`` lines. Other languages: none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from . import js_imports, tags
from .python_defs import IMPORT_SCAN_CHARS

PYTHON_IMPORT = re.compile(
    r"from[ \t]+\.*[\w.]*[ \t]+import\b"
    r"|import[ \t]+[\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*"
    r"[ \t]*,?[ \t]*\\?[ \t]*(?:#.*)?$")
"""A module-level Python import statement's first line (at the line's start: not a
function's; a docstring's line of prose that starts with "from" or "import" is not one)."""

C_INCLUDE = re.compile(r"[ \t]*#[ \t]*include\b")
"""A C or C++ ``#include`` line."""


def import_head(text: str, window_start: int, path: Path | None, language_id: str) -> str:
    """The import lines of ``text`` before ``window_start`` (a str index: where the prompt's
    window above the cursor starts), whole lines in document order; "" for a language not
    read here. Only the document's first ``IMPORT_SCAN_CHARS`` are read."""
    return import_heads(text, (window_start,), path, language_id)[0]


def import_heads(text: str, ends: Sequence[int], path: Path | None,
                 language_id: str) -> tuple[str, ...]:
    """``import_head`` before each of ``ends``, from one read of the document's start."""
    heads = [_whole_lines_end(text, end) for end in ends]
    lines = _import_lines(text[: max(heads, default=0)], _language(path, language_id))
    return tuple("".join(line for line_end, line in lines if line_end <= head)
                 for head in heads)


def _whole_lines_end(text: str, end: int) -> int:
    """Where the whole lines before ``end`` end, within the first ``IMPORT_SCAN_CHARS``."""
    return text.rfind("\n", 0, max(0, min(end, IMPORT_SCAN_CHARS))) + 1


def _import_lines(head: str, language: str | None) -> list[tuple[int, str]]:
    """The import statements' lines of ``head`` with where each ends in it, in order."""
    if language == "python":
        return _python(head)
    if language in js_imports.LANGUAGES:
        out, pos = [], 0
        for statement in js_imports.imports(language, head).statements:
            start = head.find(statement, pos)
            pos = len(head) if start < 0 else start + len(statement)
            out.append((pos, statement + "\n"))
        return out
    if language in ("c", "cpp"):
        return [(end, line) for end, line in _lines(head) if C_INCLUDE.match(line)]
    return []


LANGUAGE_IDS = {"python": "python", "javascript": "javascript", "javascriptreact": "javascript",
                "typescript": "typescript", "typescriptreact": "tsx", "c": "c", "cpp": "cpp"}
"""LSP language ids read here, for a document whose path says nothing (untitled)."""


def _language(path: Path | None, language_id: str) -> str | None:
    found = tags.language_of(path.suffix) if path is not None else None
    return found or LANGUAGE_IDS.get(language_id)


def _lines(head: str) -> list[tuple[int, str]]:
    """Each line of ``head`` (with its newline) and where it ends."""
    out, end = [], 0
    for line in head.splitlines(keepends=True):
        end += len(line)
        out.append((end, line))
    return out


def _python(head: str) -> list[tuple[int, str]]:
    """The module-level import statements' lines of ``head``."""
    out: list[tuple[int, str]] = []
    depth, continued = 0, False
    for end, line in _lines(head):
        if depth > 0 or continued:
            out.append((end, line))
        elif PYTHON_IMPORT.match(line):
            out.append((end, line))
        else:
            continue
        depth = max(0, depth + line.count("(") - line.count(")"))
        continued = line.rstrip().endswith("\\")
    return out
