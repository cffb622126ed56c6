"""Cross-file completion cases from real packages, built the way CrossCodeEval builds them.

A case is a line inside a function that uses a name the file imports from another module of
the same package (``from .other import name`` or ``from package.other import name``, where
``other`` defines ``name`` at its top level; or ``other.name`` after ``from . import other``).
With ``first_use`` only the first line in the file that uses the name counts, so the file
itself never shows how it is called. The line is blanked to its indentation and the cursor put
after it; the answer is the line's text.

Selection is deterministic (see ``select``): a seeded shuffle per source, the sources taken in
turn, at most ``per_file`` cases from one file.
"""

from __future__ import annotations

import ast
import importlib.util
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 400_000
"""Larger files are skipped (generated tables, vendored bundles)."""

LINE_CHARS = (8, 120)
"""An answer line's length without indentation, inclusive bounds."""

COPY_IGNORED = ("__pycache__", "*.pyc", "*.so", "*.pyd")
"""Left out of a workspace copy: build products no editor shows."""

HEADED = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)
"""Compound statements whose header line (``if x:``) can be a case on its own."""


@dataclass(frozen=True, slots=True)
class Source:
    """A package or folder cases are drawn from."""

    name: str
    """As given: a dotted package name (``xml.dom``) or a folder path."""
    folder: Path
    """Where its files are."""
    place: Path
    """Where the folder goes inside a workspace (``xml/dom``), so imports resolve there."""
    dotted: str
    """The module name of the folder's ``__init__`` (``xml.dom``)."""


@dataclass(frozen=True, slots=True)
class CrossCase:
    """One blanked line; the workspace file holds ``text``, the buffer the editor has."""

    source: str
    """The ``Source.name`` it came from."""
    path: str
    """The file, relative to the workspace root (posix)."""
    line: int
    """The blanked line (0-based)."""
    text: str
    """The file with the line blanked to its indentation."""
    offset: int
    """The cursor: after the indentation of the blanked line (a str index into ``text``)."""
    expected: str
    """The line's original text without its indentation."""
    name: str
    """The name the line uses from the other module (``f`` of ``f(x)`` or ``m.f(x)``)."""
    defined_in: str
    """The module that defines the name, relative to the workspace root (posix)."""


def resolve_source(name: str) -> Source:
    """A folder path, or an installed package's dotted name; raises ValueError otherwise."""
    folder = Path(name).expanduser()
    if folder.is_dir():
        folder = folder.resolve()
        return Source(name, folder, Path(folder.name), folder.name)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"{name!r} is neither a folder nor an installed package")
    folder = Path(next(iter(spec.submodule_search_locations))).resolve()
    return Source(name, folder, Path(*name.split(".")), name)


def modules(source: Source) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under the source's folder."""
    out: dict[str, Path] = {}
    for path in sorted(source.folder.rglob("*.py")):
        rel = path.relative_to(source.folder)
        if "__pycache__" in rel.parts or not all(p.isidentifier() for p in rel.parts[:-1]):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join([source.dotted, *parts])] = path
    return out


def _parse(path: Path) -> tuple[str, ast.Module] | None:
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


def _function_lines(tree: ast.Module, lines: list[str]) -> dict[int, list[ast.AST]]:
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


def file_cases(source: Source, module: str, path: Path, defined: dict[str, set[str]],
               paths: dict[str, Path], first_use: bool = False) -> list[CrossCase]:
    """The cases of one file (see the module docstring), in line order; ``first_use``: only
    the first line that uses each name."""
    parsed = _parse(path)
    if parsed is None:
        return []
    text, tree = parsed
    imports = imported_names(module, path, tree, defined)
    if not imports:
        return []
    lines = _lines(text)
    candidates = _function_lines(tree, lines)
    cases = []
    seen: set[tuple[str, str]] = set()
    for key, node in name_uses(tree, imports, defined):
        if first_use and key in seen:
            continue
        seen.add(key)
        defining_module, name = key
        lineno = node.lineno
        header = candidates.pop(lineno, None)  # one case a line: its first name
        if header is None or not any(n is node for e in header for n in ast.walk(e)):
            continue
        line = lines[lineno - 1]
        body = line.rstrip("\r\n")
        indent = body[: len(body) - len(body.lstrip())]
        expected = body.strip()
        if not LINE_CHARS[0] <= len(expected) <= LINE_CHARS[1]:
            continue
        start = sum(len(x) for x in lines[: lineno - 1])
        newline = line[len(body):]
        buffer = text[:start] + indent + newline + text[start + len(line):]
        defining = paths[defining_module]
        cases.append(CrossCase(
            source=source.name, path=_workspace_path(source, path), line=lineno - 1,
            text=buffer, offset=start + len(indent), expected=expected, name=name,
            defined_in=_workspace_path(source, defining)))
    return cases


def _lines(text: str) -> list[str]:
    """The lines as ``ast`` counts them (``str.splitlines`` also splits at form feeds)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _workspace_path(source: Source, path: Path) -> str:
    return (source.place / path.relative_to(source.folder)).as_posix()


def source_cases(source: Source, first_use: bool = False) -> list[CrossCase]:
    """Every case of a source, in path and line order (see ``file_cases``)."""
    paths = modules(source)
    defined: dict[str, set[str]] = {}
    for module, path in paths.items():
        parsed = _parse(path)
        if parsed is not None:
            defined[module] = top_level_names(parsed[1])
    out = []
    for module, path in paths.items():
        out.extend(file_cases(source, module, path, defined, paths, first_use))
    return out


def select(cases: list[CrossCase], count: int, seed: int, per_file: int) -> list[CrossCase]:
    """``count`` cases by a seeded shuffle of each source's cases, taken from the sources in
    turn (a package with a thousand cases does not crowd out one with twenty), at most
    ``per_file`` from one file. The same cases in any order give the same selection."""
    rng = random.Random(seed)
    by_source: dict[str, list[CrossCase]] = {}
    for case in sorted(cases, key=lambda c: (c.source, c.path, c.line)):
        by_source.setdefault(case.source, []).append(case)
    queues = []
    for name in sorted(by_source):
        queue = by_source[name]
        rng.shuffle(queue)
        queues.append(queue)
    taken: dict[str, int] = {}
    out: list[CrossCase] = []
    while len(out) < count and any(queues):
        for queue in queues:
            while queue:
                case = queue.pop(0)
                if taken.get(case.path, 0) < per_file:
                    taken[case.path] = taken.get(case.path, 0) + 1
                    out.append(case)
                    break
            if len(out) >= count:
                break
    return out


def make_workspace(source: Source, case: CrossCase, root: Path) -> Path:
    """Copy the source under ``root`` (at ``source.place``) with the case's file holding its
    blanked buffer; returns the case file's path there."""
    shutil.copytree(source.folder, root / source.place, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(*COPY_IGNORED), symlinks=True)
    target = root / case.path
    target.write_text(case.text, encoding="utf-8")
    return target
