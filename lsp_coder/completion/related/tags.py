"""Definitions in a source file by tree-sitter and each language's own tag queries.

Covered: JavaScript, TypeScript (and TSX), Go, Rust, C, C++, Java, Lua, shell (bash), and
Python (used when ``ast`` cannot parse a file). The grammars and their ``tags.scm`` queries
come from the per-language PyPI packages; a package that is missing only leaves its language
out. Shell's package ships no tag query, so its one pattern is written here.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

GRAMMARS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "python": ("tree_sitter_python", "language", ()),
    "javascript": ("tree_sitter_javascript", "language", ()),
    "typescript": ("tree_sitter_typescript", "language_typescript", ("tree_sitter_javascript",)),
    "tsx": ("tree_sitter_typescript", "language_tsx", ("tree_sitter_javascript",)),
    "go": ("tree_sitter_go", "language", ()),
    "rust": ("tree_sitter_rust", "language", ()),
    "c": ("tree_sitter_c", "language", ()),
    "cpp": ("tree_sitter_cpp", "language", ("tree_sitter_c",)),
    "java": ("tree_sitter_java", "language", ()),
    "lua": ("tree_sitter_lua", "language", ()),
    "bash": ("tree_sitter_bash", "language", ()),
}
"""Language -> (package, its function returning the grammar, packages whose tag queries are
added: TypeScript's own query covers only what JavaScript's lacks, and C++'s C's)."""

OWN_QUERIES = {"bash": "(function_definition name: (word) @name) @definition.function"}
"""Tag queries for packages that ship none."""

SUFFIXES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".java": "java", ".lua": "lua", ".sh": "bash", ".bash": "bash",
}
"""Source file suffixes the index reads, and their language."""

FAMILY = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}
"""Languages whose files may define what another's use (a .ts file imports from .js)."""


def family(language: str) -> str:
    """The family of ``language`` in ``FAMILY`` (the language itself where it has none)."""
    return FAMILY.get(language, language)

SMALL_DEFINITION_LINES = 12
"""A definition this short is shown whole (a struct's fields, a short function)."""

HEADER_LINES = 6
"""At most this many lines of a definition's signature."""

MEMBER_LINES = 24
"""At most this many members' first lines of a class-like definition."""

DOC_LINES = 3
"""At most this many comment lines just above a definition."""

COMMENT_STARTS = ("//", "/*", "*", "#", "--", "///")


@dataclass(frozen=True, slots=True)
class Tag:
    """One definition found in a file."""

    name: str
    """The defined name."""
    kind: str
    """What the query calls it: function, method, class, interface, type, module, ..."""
    start_line: int
    """Its first line (0-based), decorators and attributes not included."""
    end_line: int
    """Its last line (0-based, inclusive)."""
    body_line: int
    """The line its body starts on (-1: it has no body field)."""


def language_of(suffix: str) -> str | None:
    """The covered language of a file suffix, or None."""
    return SUFFIXES.get(suffix.lower())


@lru_cache(maxsize=None)
def grammar(language: str) -> Any | None:
    """The tree-sitter Language of ``language``, or None when its package is not installed."""
    try:
        from tree_sitter import Language

        package, function, _ = GRAMMARS[language]
        return Language(getattr(importlib.import_module(package), function)())
    except (ImportError, AttributeError, KeyError, ValueError, OSError) as exc:
        log.info("no grammar for %s: %s", language, type(exc).__name__)
        return None


@lru_cache(maxsize=None)
def _grammar(language: str) -> tuple[Any, Any] | None:
    """(Language, Query) for ``language``, or None when its package is not installed."""
    lang = grammar(language)
    if lang is None:
        return None
    try:
        from tree_sitter import Query

        package, _, extra = GRAMMARS[language]
        sources = [importlib.import_module(p).TAGS_QUERY for p in extra]
        sources.append(OWN_QUERIES.get(language) or importlib.import_module(package).TAGS_QUERY)
        return lang, Query(lang, "\n".join(sources))
    except (ImportError, AttributeError, KeyError, ValueError, OSError) as exc:
        log.info("no definitions for %s: %s", language, type(exc).__name__)
        return None


def definitions(language: str, source: bytes) -> list[Tag]:
    """The definitions the language's tag query finds in ``source``, in file order.

    A syntax error costs only the definitions inside the broken part (tree-sitter recovers).
    """
    compiled = _grammar(language)
    if compiled is None:
        return []
    from tree_sitter import Parser, QueryCursor

    lang, query = compiled
    # A parser and a cursor per call: the worker and the index thread may both be here.
    tree = Parser(lang).parse(source)
    matches = QueryCursor(query).matches(tree.root_node)
    found: dict[tuple[str, int], Tag] = {}
    for _pattern, captures in matches:
        names = captures.get("name")
        kinds = [k for k in captures if k.startswith("definition.")]
        if not names or not kinds:
            continue
        node = captures[kinds[0]][0]
        name = names[0].text.decode("utf-8", "replace")
        body = node.child_by_field_name("body")
        tag = Tag(name, kinds[0].removeprefix("definition."), node.start_point[0],
                  node.end_point[0], body.start_point[0] if body is not None else -1)
        found.setdefault((name, tag.start_line), tag)
    return sorted(found.values(), key=lambda t: (t.start_line, t.name))


def render(tag: Tag, lines: list[str], members: list[Tag]) -> str:
    """The text that shows ``tag`` to the model: the comment just above it, then the whole
    definition when it is short, else its signature and its members' first lines.

    ``lines``: the file's lines (with their ends); ``members``: the file's tags inside it.
    """
    start, end = tag.start_line, min(tag.end_line, len(lines) - 1)
    doc: list[str] = []
    row = start - 1
    while row >= 0 and len(doc) < DOC_LINES and lines[row].lstrip().startswith(COMMENT_STARTS):
        doc.insert(0, lines[row])
        row -= 1
    if end - start + 1 <= SMALL_DEFINITION_LINES:
        return "".join(doc + lines[start : end + 1])
    header_end = tag.body_line if tag.body_line >= start else start
    header = lines[start : min(header_end + 1, start + HEADER_LINES)]
    inner = [m for m in members if start < m.start_line <= end and m is not tag]
    shown = [lines[m.start_line] for m in inner[:MEMBER_LINES]]
    closing = [lines[end]] if lines[end].strip() in ("}", "};", "end") else []
    return "".join(doc + header + shown + closing)
