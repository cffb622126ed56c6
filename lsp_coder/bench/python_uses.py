"""Where a Python file uses names it imports from other modules of its package (``ast``)."""

from __future__ import annotations

import ast
from pathlib import Path

MAX_FILE_BYTES = 400_000
"""Larger files are skipped (generated tables, vendored bundles)."""

HEADED = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)
"""Compound statements whose header line (``if x:``) can be a case on its own."""


def parse(path: Path) -> tuple[str, ast.Module] | None:
    """The file's text and syntax tree; None if it is too big, unreadable or not Python."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        text = path.read_text(encoding="utf-8")
        return text, ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a module defines at its top level (functions, classes, assignments)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(module: str, path: Path, tree: ast.Module,
                   defined: dict[str, set[str]]) -> dict[str, tuple[str, str]]:
    """Local name -> (module, name there) for the file's top-level imports from other modules
    of the package: ``from .m import f`` gives ``f -> (pkg.m, f)`` when ``m`` defines ``f``;
    ``from . import m`` and ``import pkg.m as m`` give ``m -> (pkg.m, "")`` (a module)."""
    out: dict[str, tuple[str, str]] = {}
    is_package = path.name == "__init__.py"
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in defined and alias.name != module:
                    out[alias.asname] = (alias.name, "")
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        target = _absolute(module, node, is_package)
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            if submodule in defined and submodule != module:
                out[alias.asname or alias.name] = (submodule, "")
            elif target in defined and target != module and alias.name in defined[target]:
                out[alias.asname or alias.name] = (target, alias.name)
    return out


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _bound_in(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Names a function binds itself (parameters, assignments, local imports and
    definitions, nested ones included): there they are not the module's imports."""
    names: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is not fn:
                names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _scoped(node: ast.AST, shadowed: frozenset[str] = frozenset()):
    """Every node under ``node`` with the names the functions around it bind."""
    for child in ast.iter_child_nodes(node):
        inner = shadowed | _bound_in(child) if isinstance(child, FUNCTIONS) else shadowed
        yield child, inner
        yield from _scoped(child, inner)


def name_uses(tree: ast.Module, imports: dict[str, tuple[str, str]],
              defined: dict[str, set[str]]) -> list[tuple[tuple[str, str], ast.expr]]:
    """Every read of an imported name, as ((module, name), node), in line and column order:
    a ``Name`` bound by ``from m import name``, or ``binding.name`` for a module binding
    whose module defines ``name``; a function's own variable of the same name is not one."""
    out: list[tuple[tuple[str, str], ast.expr]] = []
    for node, shadowed in _scoped(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            module, name = imports.get(node.id, ("", ""))
            if name and node.id not in shadowed:
                out.append(((module, name), node))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module, name = imports.get(node.value.id, ("", "x"))
            if not name and node.attr in defined.get(module, ()) and (
                    node.value.id not in shadowed):
                out.append(((module, node.attr), node))
    return sorted(out, key=lambda use: (use[1].lineno, use[1].col_offset))


def _header(stmt: ast.stmt) -> list[ast.AST] | None:
    """The expressions on a statement's first line if that line holds only them, else None."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef, ast.Try, ast.Match)):
        return None
    if isinstance(stmt, HEADED):
        if stmt.body[0].lineno <= stmt.lineno:
            return None
        if isinstance(stmt, (ast.If, ast.While)):
            return [stmt.test]
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            return [stmt.target, stmt.iter]
        return [e for item in stmt.items for e in (item.context_expr, item.optional_vars) if e]
    if hasattr(stmt, "body"):
        return None
    return [stmt] if stmt.end_lineno == stmt.lineno else None


def function_lines(tree: ast.Module, lines: list[str]) -> dict[int, list[ast.AST]]:
    """1-based line -> header expressions, for statements in function bodies that fill their
    line alone (no second statement, no trailing comment)."""
    out: dict[int, list[ast.AST]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if node is fn or not isinstance(node, ast.stmt) or node.lineno in out:
                continue
            header = _header(node)
            if header is None or any(e.end_lineno != node.lineno for e in header):
                continue
            body = lines[node.lineno - 1].rstrip()
            indent = len(body) - len(body.lstrip())
            # ast's columns count UTF-8 bytes
            if node.col_offset != len(body[:indent].encode()):
                continue
            if isinstance(node, HEADED):
                if not body.endswith(":"):
                    continue
            elif node.end_col_offset != len(body.encode()):
                continue
            out[node.lineno] = header
    return out


def split_lines(text: str) -> list[str]:
    """The lines as ``ast`` counts them (``str.splitlines`` also splits at form feeds)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
