"""Python: what a defining module shows of itself in the other files' section.

A top-level function shows its signature and the first lines of its docstring, a class its
fields, ``__init__`` and method signatures (never whole bodies), a constant its line. The
module's outline is one short entry per top-level name, for code that uses the module as an
object (``protocols.`` then the name being typed).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from . import tags

DOCSTRING_LINES = 3
"""The first lines of a docstring that are shown."""

METHODS_SHOWN = 24
"""At most this many methods of a class are listed (their signatures)."""

OUTLINE_LINE_CHARS = 120
"""A constant whose first line is longer than this is left out of the outline."""


@dataclass(frozen=True, slots=True)
class Imported:
    """What one local name of a module stands for."""

    module: str
    """The module named in the import (``pkg.mod``; for ``from . import x``, "")."""
    level: int
    """Leading dots of a relative import (0: absolute)."""
    attr: str
    """The name taken from the module ("" when the local name is the module itself)."""


@dataclass(slots=True)
class ParsedModule:
    """What a parsed file offers: rendered top-level definitions and its re-exports."""

    defined: dict[str, str]
    """Top-level name -> its rendered text."""
    outline: list[tuple[str, str]]
    """(name, its one-entry summary) per top-level definition, in the file's order."""
    reexports: dict[str, Imported]
    """Names it imports (``from .core import Name``): where to look further."""
    star: list[Imported]
    """``from x import *`` modules, looked in when a name is not found."""


def parse_module(source: bytes) -> ParsedModule:
    """Render the top-level definitions of ``source``; a file with a syntax error gets its
    definitions from tree-sitter's error-tolerant parse instead."""
    text = source.decode("utf-8", "replace")
    lines = text.splitlines(keepends=True)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = tags.definitions("python", source)
        top = [t for t in found if not any(o.start_line < t.start_line <= o.end_line
                                           for o in found if o is not t)]
        outline = [(t.name, _ellipsis(lines[t.start_line])) for t in top
                   if t.start_line < len(lines)]
        return ParsedModule({t.name: tags.render(t, lines, found) for t in top},
                            outline, {}, [])
    defined: dict[str, str] = {}
    outline: list[tuple[str, str]] = []
    reexports: dict[str, Imported] = {}
    star: list[Imported] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[node.name] = "".join(_function(node, lines))
            outline.append((node.name, _signature(node, lines)))
        elif isinstance(node, ast.ClassDef):
            defined[node.name] = "".join(_class(node, lines))
            outline.append((node.name, _signature(node, lines)))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
            for target in targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = line
                    if len(line) <= OUTLINE_LINE_CHARS and node.end_lineno == node.lineno:
                        outline.append((target.id, line))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    star.append(Imported(node.module or "", node.level, ""))
                else:
                    reexports[alias.asname or alias.name] = Imported(
                        node.module or "", node.level, alias.name)
    return ParsedModule(defined, outline, reexports, star)


def _header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
            lines: list[str]) -> list[str]:
    """The lines from the first decorator to the line before the body (the whole first
    line for a one-line definition)."""
    first = min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1
    body = node.body[0].lineno - 1
    if body <= node.lineno - 1:
        return [lines[node.lineno - 1]]
    return lines[first:body]


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
               lines: list[str]) -> str:
    """The definition's lines up to its body, without decorators, ending in `` ...``."""
    body = node.body[0].lineno - 1
    header = lines[node.lineno - 1 : max(body, node.lineno)]
    if body <= node.lineno - 1:  # a one-line definition: its line as it is
        return header[0]
    while len(header) > 1 and header[-1].strip()[:1] in ("", "#"):
        header.pop()  # blank or comment lines before the body
    return "".join(header[:-1]) + _ellipsis(header[-1])


def _ellipsis(line: str) -> str:
    """``line`` (a definition's last header line) with `` ...`` after it."""
    return line.rstrip() + " ...\n"


def _docstring(node: ast.AST, indent: str) -> list[str]:
    doc = ast.get_docstring(node)  # type: ignore[arg-type]
    if not doc:
        return []
    first = doc.strip().split("\n\n", 1)[0].splitlines()[:DOCSTRING_LINES]
    if len(first) == 1:
        return [f'{indent}"""{first[0].strip()}"""\n']
    return [f'{indent}"""{first[0].strip()}\n'] + [f"{indent}{line.strip()}\n"
                                                  for line in first[1:]] + [f'{indent}"""\n']


def _body_indent(node: ast.AST, lines: list[str]) -> str:
    line = lines[node.body[0].lineno - 1]  # type: ignore[attr-defined]
    return line[: len(line) - len(line.lstrip())] or "    "


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[str]:
    header = _header(node, lines)
    if len(header) == 1 and node.body[0].lineno == node.lineno:
        return header
    indent = _body_indent(node, lines)
    return header + _docstring(node, indent) + [f"{indent}...\n"]


def _class(node: ast.ClassDef, lines: list[str]) -> list[str]:
    out = _header(node, lines)
    indent = _body_indent(node, lines)
    out += _docstring(node, indent)
    methods = 0
    for item in node.body:
        if isinstance(item, (ast.AnnAssign, ast.Assign)):
            out.append(lines[item.lineno - 1])
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and methods < (
                METHODS_SHOWN):
            methods += 1
            if item.name == "__init__":
                out += _function(item, lines)
            else:
                out += _header(item, lines) + [f"{indent}    ...\n"]
    return out
