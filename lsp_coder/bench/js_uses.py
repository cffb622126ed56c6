"""Cross-file cases in JavaScript and TypeScript packages: lines inside functions that use a
name imported from another file of the same package.

The imports are read as the server reads them (``completion.related.js_imports``: ES
``import {x} from './y'``, ``import * as y from './y'``, CommonJS ``const {x} = require('./y')``
and ``const y = require('./y')``), and resolved as it resolves them. A use is the imported
name itself (``x(1)``), or ``y.name`` through a module imported whole when the file ``y``
resolves to names ``name``. A case is a line holding one statement whole (or the header of
an ``if``/``for``/``while`` block ending in ``{``), in a function, whose first cross-file name
is such a use; a name the file binds again (a parameter, a local variable) gives none.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ..completion.related import js_definitions, js_imports, tags
from .crossfile_cases import LINE_CHARS, CrossCase, Source

SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
"""Files read for cases (JSX and TSX are left out: their lines are markup as often as code)."""

TS_SUFFIXES = (".ts", ".mts", ".cts")
"""TypeScript's among them."""

MAX_FILE_BYTES = 400_000
"""Larger files are skipped (bundles, generated tables)."""

SKIPPED_PARTS = ("node_modules", "dist", "umd", "min", "browser", "esm", "cjs", "lib-es6")
"""Folders of other packages or of builds that repeat the sources (an ``esm`` next to a
``cjs`` copy of the same code would put each line in twice)."""

COPY_CONTEXT_LINES = 3
"""A case whose line and this many lines above it another file of the package holds too is a
copy of that file's case (``copies_left_out``)."""

FUNCTIONS = frozenset({"function_declaration", "function_expression", "function",
                       "arrow_function", "method_definition", "generator_function_declaration",
                       "generator_function"})

BLOCK_HEADERS = frozenset({"if_statement", "for_statement", "for_in_statement",
                           "while_statement", "else_clause"})

BINDERS = frozenset({"formal_parameters", "required_parameter", "optional_parameter",
                     "variable_declarator", "catch_clause", "for_in_statement",
                     "object_pattern", "array_pattern", "shorthand_property_identifier_pattern",
                     "assignment_pattern", "rest_pattern", "pair_pattern"})
"""Where an identifier may be bound again (not a use of the import)."""


def files(folder: Path) -> list[Path]:
    """The package's JavaScript and TypeScript files (no declarations, no minified builds, no
    JavaScript compiled from its TypeScript: ``_below_top``)."""
    found: list[tuple[Path, tuple[str, ...]]] = []  # (file, its path below the top folder)
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if (path.suffix not in SUFFIXES or path.name.endswith((".d.ts", ".min.js"))
                or any(part in SKIPPED_PARTS or part.startswith(".") for part in rel.parts[:-1])):
            continue
        if path.is_file():
            found.append((path, _below_top(rel)))
    typescript = {below for path, below in found if path.suffix in TS_SUFFIXES}
    return [path for path, below in found
            if path.suffix in TS_SUFFIXES or below not in typescript]


def _below_top(rel: Path) -> tuple[str, ...]:
    """A file's path below its top folder, without its suffix: a JavaScript file with the
    same one as a TypeScript file was compiled from it (``dist-browser/client/X.mjs`` from
    ``src/client/X.ts``, ``module/index.js`` from ``src/index.ts``)."""
    parts = rel.with_suffix("").parts
    return parts[1:] if len(parts) > 1 else parts


def language(path: Path) -> str:
    """The language id the client opens ``path`` with."""
    return tags.language_of(path.suffix) or "javascript"


def source_cases(source: Source, first_use: bool = False) -> list[CrossCase]:
    """Every case of a package, in path and line order, each line of code once
    (``copies_left_out``)."""
    paths = files(source.folder)
    known = set(paths)
    out = []
    for path in paths:
        out.extend(file_cases(source, path, known, first_use))
    return copies_left_out(out)


def copies_left_out(cases: list[CrossCase]) -> list[CrossCase]:
    """``cases`` less the copies of a file's lines in a build of it that ``files`` keeps (one
    in the same language): a file of the same name elsewhere in the package with the same
    line and ``COPY_CONTEXT_LINES`` lines above it (``editions`` ships
    ``edition-deno/index.ts``, its imports rewritten, beside ``source/index.ts``). The file
    with the shortest path keeps its case (``source/`` before ``edition-deno/``). A line
    written twice in one file, or in two files of other names, is two cases: code a package
    repeats, not a copy."""
    first_file: dict[tuple[str, ...], str] = {}
    chosen = set()
    for case in sorted(cases, key=lambda c: (len(c.path), c.path, c.line)):
        if first_file.setdefault(_copy_key(case), case.path) == case.path:
            chosen.add(case)
    return [case for case in cases if case in chosen]


def _copy_key(case: CrossCase) -> tuple[str, ...]:
    """The case's file name without its suffix, the lines above it up to its cursor without
    indentation, and its answer."""
    head = case.text[: case.offset].rsplit("\n", COPY_CONTEXT_LINES + 1)[1:]
    name = case.path.rsplit("/", 1)[-1].split(".", 1)[0]
    return (name, *(line.strip() for line in head), case.expected)


def file_cases(source: Source, path: Path, known: set[Path],
               first_use: bool = False) -> list[CrossCase]:
    """The cases of one file (see the module docstring), in line order."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return []
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    lang = language(path)
    found = js_imports.imports(lang, text)
    targets: dict[str, tuple[Path, str]] = {}  # local name -> (file, exported name)
    for local, binding in found.bindings.items():
        target = js_definitions.resolve(binding.source, path)
        if target is not None and target in known and target != path:
            targets[local] = (target, binding.exported)
    if not targets:
        return []
    grammar = tags.grammar(lang)
    if grammar is None:
        return []
    from tree_sitter import Parser

    data = text.encode("utf-8")
    root = Parser(grammar).parse(data).root_node
    rebound = _rebound(root, set(targets))
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    cases: list[CrossCase] = []
    seen_lines: set[int] = set()
    seen_names: set[tuple[Path, str]] = set()
    for node in _identifiers(root):
        local = node.text.decode("utf-8", "replace")
        if local not in targets or local in rebound:
            continue
        target, exported = targets[local]
        name = _use(node, local, exported, target)
        if name is None:
            continue
        row = node.start_point[0]
        if row in seen_lines:
            continue
        seen_lines.add(row)  # one case a line: its first cross-file name
        if first_use and (target, name) in seen_names:
            continue
        seen_names.add((target, name))
        if not _whole_line(node, row, lines[row]) or not _in_function(node):
            continue
        line = lines[row]
        body = line.rstrip("\r")
        indent = body[: len(body) - len(body.lstrip())]
        expected = body.strip()
        if not LINE_CHARS[0] <= len(expected) <= LINE_CHARS[1]:
            continue
        column = len(body.encode()[: node.start_point[1]].decode(errors="replace"))
        buffer = "\n".join([*lines[:row], indent + line[len(body):], *lines[row + 1:]])
        cases.append(CrossCase(
            source=source.name, path=_place(source, path), line=row, text=buffer,
            offset=starts[row] + len(indent), expected=expected, name=name,
            defined_in=_place(source, target), use_at=column - len(indent), language=lang))
    return cases


def _place(source: Source, path: Path) -> str:
    return (source.place / path.relative_to(source.folder)).as_posix()


def _identifiers(root, kinds: tuple[str, ...] = ("identifier",)):
    """Every node of ``kinds``, in file order."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in kinds:
            yield node
        stack.extend(reversed(node.children))


def _rebound(root, names: set[str]) -> set[str]:
    """The imported ``names`` the file binds again somewhere (a parameter, a variable, a
    destructured name), the import itself aside."""
    out = set()
    for node in _identifiers(root, ("identifier", "shorthand_property_identifier_pattern")):
        local = node.text.decode("utf-8", "replace")
        if local not in names or node.parent is None or node.parent.type not in BINDERS:
            continue
        statement = node.parent
        while statement is not None and statement.type not in js_imports.STATEMENTS:
            statement = statement.parent
        if (statement is not None and b"require" in statement.text
                and statement.parent is not None and statement.parent.type == "program"):
            continue  # the top-level require that imports it
        if node.parent.type == "variable_declarator" and (
                node.parent.child_by_field_name("name") != node):
            continue  # the value of a declarator (const a = x): a use
        if node.parent.type == "pair_pattern" and node.parent.child_by_field_name("key") == node:
            continue
        if node.parent.type == "assignment_pattern" and (
                node.parent.child_by_field_name("right") == node):
            continue
        out.add(local)
    return out


def _use(node, local: str, exported: str, target: Path) -> str | None:
    """The name an identifier bound by an import uses from the other file, or None: ``x``
    bound by name (its exported name), ``y.name`` through a module imported whole."""
    parent = node.parent
    if parent is None or parent.type in js_imports.STATEMENTS or parent.type in (
            "import_specifier", "namespace_import", "import_clause"):
        return None
    if exported not in (js_imports.NAMESPACE, js_imports.DEFAULT):
        return exported
    if exported == js_imports.DEFAULT:
        return local
    if parent.type != "member_expression" or parent.child_by_field_name("object") != node:
        return None
    prop = parent.child_by_field_name("property")
    if prop is None:
        return None
    name = prop.text.decode("utf-8", "replace")
    return name if _mentions(target, name) else None


def _mentions(target: Path, name: str) -> bool:
    """``target`` names ``name`` as a whole word (what a module imported whole offers)."""
    return name in _words(target)


@lru_cache(maxsize=64)
def _words(path: Path) -> frozenset[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(re.findall(r"[\w$]+", text))


def _in_function(node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in FUNCTIONS:
            return True
        parent = parent.parent
    return False


def _whole_line(node, row: int, line: str) -> bool:
    """The statement around ``node`` fills its line alone: one statement on one line, or a
    block's header ending in ``{``."""
    indent = len(line) - len(line.lstrip())
    stripped = line.rstrip()
    statement = node.parent
    while statement is not None and not (statement.type.endswith(("statement", "declaration"))
                                         or statement.type in BLOCK_HEADERS):
        statement = statement.parent
    if statement is None or statement.start_point[0] != row:
        return False
    if len(line[:indent].encode()) != statement.start_point[1]:
        return False
    if statement.end_point[0] == row:
        return statement.end_point[1] == len(stripped.encode())
    if statement.type in BLOCK_HEADERS or statement.type.startswith("if"):
        body = statement.child_by_field_name("body") or statement.child_by_field_name(
            "consequence")
        return (stripped.endswith("{") and body is not None and body.start_point[0] == row
                and body.start_point[1] == len(stripped.encode()) - 1)
    return False
