"""What a Python module offers after its dot, read from its text alone: the names it binds at
its top level (none where they cannot all be known) and, for a package, its submodules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

MODULE_DUNDERS = frozenset({
    "__name__", "__file__", "__doc__", "__dict__", "__spec__", "__loader__", "__package__",
    "__path__", "__all__", "__builtins__", "__cached__", "__annotations__", "__class__",
})
"""Names every module (or package) has without binding them."""

FOLDER_ENTRIES = 4096
"""A package folder with more entries than this offers no submodules (none can be ruled out)."""

OPEN_WORLD = (b"globals()", b"locals()", b"vars()", b"sys.modules[", b"setattr(sys.modules",
              b"exec(")
"""Text that can bind module names no statement shows."""

PATH_CHANGED = b"__path__"
"""Text of a package's ``__init__`` that can find its submodules in other folders too
(``pkgutil.extend_path``, a ``__path__`` appended to)."""

EXTENSION_SUFFIXES = (".so", ".pyd")
"""Compiled modules (``_speedups.cpython-311-x86_64-linux-gnu.so``: the module ``_speedups``)."""


def module_names(data: bytes) -> frozenset[str] | None:
    """The names the module ``data`` binds at its top level, with ``MODULE_DUNDERS``; None
    when they cannot all be known (a star import, ``__getattr__``, ``OPEN_WORLD``, a syntax
    error)."""
    if any(marker in data for marker in OPEN_WORLD):
        return None
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set(MODULE_DUNDERS)
    for node in _top_level(tree.body):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        names.update(_bound(node))
    names.update(name for node in ast.walk(tree) if isinstance(node, ast.Global)
                 for name in node.names)
    return None if "__getattr__" in names else frozenset(names)


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run at module level: ``body`` and the blocks of its ``if``,
    ``try``, ``for``, ``while`` and ``with`` statements, not function or class bodies."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(node, block, None)
            if inner and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.ClassDef)):
                yield from _top_level(inner)
        for handler in getattr(node, "handlers", ()):
            yield from _top_level(handler.body)
        for case in getattr(node, "cases", ()):
            yield from _top_level(case.body)


def _bound(node: ast.stmt) -> Iterator[str]:
    """The names ``node`` binds in its own scope."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.asname or alias.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom):
        for alias in node.names:
            yield alias.asname or alias.name
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars]
    elif isinstance(node, getattr(ast, "TypeAlias", ())):
        targets = [node.name]  # type: ignore[attr-defined]
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                yield sub.id
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for sub in ast.walk(node):  # ``if (m := ...)`` binds ``m`` in the module
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                yield sub.target.id
    for handler in getattr(node, "handlers", ()):
        if handler.name:
            yield handler.name


def submodules(folder: Path) -> frozenset[str] | None:
    """The names of the modules (source or compiled) and packages in ``folder``; None where
    it cannot be read or holds more than ``FOLDER_ENTRIES`` entries."""
    try:
        entries = list(islice(folder.iterdir(), FOLDER_ENTRIES + 1))
    except OSError:
        return None
    if len(entries) > FOLDER_ENTRIES:
        return None
    out = {e.stem for e in entries if e.suffix == ".py" and e.stem.isidentifier()}
    out |= {e.name.split(".")[0] for e in entries
            if e.suffix in EXTENSION_SUFFIXES and e.name.split(".")[0].isidentifier()}
    out |= {e.name for e in entries
            if e.is_dir() and e.name.isidentifier() and e.name != "__pycache__"}
    return frozenset(out - {"__init__"})
