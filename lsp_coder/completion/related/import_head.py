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
    head = text[: max(0, min(window_start, IMPORT_SCAN_CHARS))]
    head = head[: head.rfind("\n") + 1]
    if not head:
        return ""
    language = _language(path, language_id)
    if language == "python":
        return "".join(_python(head))
    if language in js_imports.LANGUAGES:
        return "".join(line + "\n" for line in js_imports.imports(language, head).statements)
    if language in ("c", "cpp"):
        return "".join(line for line in head.splitlines(keepends=True) if C_INCLUDE.match(line))
    return ""


LANGUAGE_IDS = {"python": "python", "javascript": "javascript", "javascriptreact": "javascript",
                "typescript": "typescript", "typescriptreact": "tsx", "c": "c", "cpp": "cpp"}
"""LSP language ids read here, for a document whose path says nothing (untitled)."""


def _language(path: Path | None, language_id: str) -> str | None:
    found = tags.language_of(path.suffix) if path is not None else None
    return found or LANGUAGE_IDS.get(language_id)


def _python(head: str) -> list[str]:
    """The module-level import statements' lines of ``head``."""
    out: list[str] = []
    depth, continued = 0, False
    for line in head.splitlines(keepends=True):
        if depth > 0 or continued:
            out.append(line)
        elif PYTHON_IMPORT.match(line):
            out.append(line)
        else:
            continue
        depth = max(0, depth + line.count("(") - line.count(")"))
        continued = line.rstrip().endswith("\\")
    return out
