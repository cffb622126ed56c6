"""What a JavaScript or TypeScript document's imports bind, and the names the lines near the
cursor use from them (``js_definitions`` follows them to the files that define them).

The import forms (``import {a, b as c} from './x'``, ``import D from './x'``,
``import * as ns from './x'``, ``const x = require('./x')``, ``const {a} = require('./x')``)
are found by a tree-sitter query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from . import tags

LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
"""The languages whose imports are read here."""

DEFAULT = "default"
"""``Binding.exported`` of a default import."""

NAMESPACE = "*"
"""``Binding.exported`` of a namespace import or a whole-module ``require``."""

_SOURCE = "source: (string (string_fragment) @source)"
_REQUIRE = ("value: (call_expression function: (identifier) @require "
            "arguments: (arguments . (string (string_fragment) @source))) "
            '(#eq? @require "require")')
QUERY = f"""
(import_statement (import_clause (identifier) @default) {_SOURCE})
(import_statement (import_clause (named_imports (import_specifier
  name: (_) @name alias: (identifier)? @alias))) {_SOURCE})
(import_statement (import_clause (namespace_import (identifier) @namespace)) {_SOURCE})
(variable_declarator name: (identifier) @namespace {_REQUIRE})
(variable_declarator name: (object_pattern (shorthand_property_identifier_pattern) @name)
  {_REQUIRE})
(variable_declarator name: (object_pattern (pair_pattern key: (property_identifier) @name
  value: (identifier) @alias)) {_REQUIRE})
"""
"""The import forms, in the JavaScript grammar's node names (TypeScript's share them)."""


@dataclass(frozen=True, slots=True)
class Binding:
    """A name an import binds in the document."""

    exported: str
    """The name the other module exports it as; ``DEFAULT`` or ``NAMESPACE``."""
    source: str
    """The module specifier as written (``./util/format``)."""


@dataclass(frozen=True, slots=True)
class Imports:
    """What a document's imports bind."""

    bindings: dict[str, Binding]
    """Each name bound, to its binding."""
    lines: frozenset[str]
    """The import statements' lines, stripped (names there are not uses)."""
    statements: tuple[str, ...] = ()
    """The import statements as written, in document order."""


NO_IMPORTS = Imports({}, frozenset())

STATEMENTS = ("import_statement", "lexical_declaration", "variable_declaration")
"""The nodes a matched import form is a statement of."""


def imports(language: str, head: str) -> Imports:
    """What the imports in ``head`` (the document's start) bind; nothing for a language not
    read here or when its grammar is missing."""
    if language not in LANGUAGES:
        return NO_IMPORTS
    return _imports(language, _import_region(head))


REGION_EXTRA_LINES = 3
"""Lines kept after the last line that holds an import word (a statement's last lines)."""


IMPORT_LINE = re.compile(r"^[ \t]*(?:import\b|export\b.*\bfrom\b|\}[ \t]*from\b)|\brequire[ \t]*\(",
                         re.MULTILINE)
"""Where an import statement may be (only to bound what is parsed; the parser decides)."""


def _import_region(head: str) -> str:
    """The start of ``head`` up to a few lines after the last line that may hold an import:
    what is parsed, so typing below the imports parses nothing again (a whole 64 KB start
    took 20-35 ms per key)."""
    last = -1
    for last_match in IMPORT_LINE.finditer(head):
        last = last_match.start()
    if last < 0:
        return ""
    end = last
    for _ in range(REGION_EXTRA_LINES + 1):
        end = head.find("\n", end) + 1
        if end <= 0:
            return head
    return head[:end]


@lru_cache(maxsize=16)
def _imports(language: str, head: str) -> Imports:
    compiled = _query(language)
    if compiled is None:
        return NO_IMPORTS
    from tree_sitter import Parser, QueryCursor

    grammar, query = compiled
    data = head.encode("utf-8", "replace")
    tree = Parser(grammar).parse(data)
    out: dict[str, Binding] = {}
    lines: set[str] = set()
    statements: dict[int, str] = {}
    for _pattern, captures in QueryCursor(query).matches(tree.root_node):
        source = _text(captures, "source")
        if not source:
            continue
        statement = captures["source"][0]
        while statement.parent is not None and statement.type not in STATEMENTS:
            statement = statement.parent
        text = data[statement.start_byte : statement.end_byte].decode("utf-8", "replace")
        statements[statement.start_byte] = text
        lines.update(line.strip() for line in text.splitlines())
        if "default" in captures:
            out.setdefault(_text(captures, "default"), Binding(DEFAULT, source))
        elif "namespace" in captures:
            out.setdefault(_text(captures, "namespace"), Binding(NAMESPACE, source))
        elif "name" in captures:
            name = _text(captures, "name").strip("'\"")
            out.setdefault(_text(captures, "alias") or name, Binding(name, source))
    return Imports(out, frozenset(lines), tuple(statements[k] for k in sorted(statements)))


def without_imports(nearby: str, found: Imports) -> str:
    """``nearby`` without the import statements' lines."""
    return "\n".join(line for line in nearby.split("\n") if line.strip() not in found.lines)


def members(bindings: dict[str, Binding], nearby: str) -> list[str]:
    """The names read from a module imported whole in ``nearby`` (``ns.name``), in order."""
    out: dict[str, None] = {}
    for local, binding in bindings.items():
        if binding.exported == NAMESPACE and local in nearby:
            for name in re.findall(rf"(?<![\w$.]){re.escape(local)}\s*\.\s*([\w$]+)", nearby):
                out.setdefault(name, None)
    return list(out)


def not_used_yet(found: Imports, text: str) -> list[str]:
    """The names ``found`` imports by name or as a default from another file (a relative
    specifier: a package's names have no file here to show) that ``text`` (the document) never
    mentions outside its import statements, the last imported first. A name also counts as
    mentioned inside a longer word, a comment or a string: only names surely not used yet."""
    statements = "\n".join(found.statements)
    return [local for local, binding in reversed(found.bindings.items())
            if binding.exported != NAMESPACE and is_relative(binding.source)
            and text.count(local) <= statements.count(local)]


def _text(captures: dict, key: str) -> str:
    nodes = captures.get(key)
    return nodes[0].text.decode("utf-8", "replace") if nodes else ""


@lru_cache(maxsize=None)
def _query(language: str):
    """(Language, Query) of the import forms, or None when the grammar is missing."""
    grammar = tags.grammar(language)
    if grammar is None:
        return None
    from tree_sitter import Query

    return grammar, Query(grammar, QUERY)


def is_relative(source: str) -> bool:
    """Whether the module specifier ``source`` names a file relative to the document (not a
    package)."""
    return source.startswith(("./", "../")) or source in (".", "..")
