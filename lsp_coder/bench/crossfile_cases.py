"""Cross-file completion cases from real packages, built the way CrossCodeEval builds them.

A case is a line inside a function that uses a name the file imports from another module of
the same package (``from .other import name`` or ``from package.other import name``, where
``other`` defines ``name`` at its top level; or ``other.name`` after ``from . import other``).
With ``first_use`` only the first line in the file that uses the name counts, so the file
itself never shows how it is called. The line is blanked to its indentation and the cursor put
after it; the answer is the line's text.

``before_name`` puts the cursor inside the line just before its first cross-file name (the
name the file's import binds), the line typed up to there and the rest of it the answer:
CrossCodeEval's recipe. ``after_module_dot`` turns a case that reaches the name through its
module (``other.name``) into one where the line is typed up to the dot (``other.``) and
completed from there: what a user sees after typing a module's name and a dot.
``import_list`` asks instead for the list of the import statement that binds the name
(``from .other import`` typed, ``name, other_name`` the answer).

Selection is deterministic (see ``select``): a seeded shuffle per source, the sources taken in
turn, at most ``per_file`` cases from one file.
"""

from __future__ import annotations

import ast
import importlib.util
import random
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from .python_uses import (
    function_lines,
    imported_names,
    name_uses,
    parse,
    split_lines,
    top_level_names,
)

LINE_CHARS = (8, 120)
"""An answer line's length without indentation, inclusive bounds."""

COPY_IGNORED = ("__pycache__", "*.pyc", "*.so", "*.pyd", "node_modules")
"""Left out of a workspace copy: build products no editor shows, and an npm package's own
dependencies (other packages' code)."""


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
    """The cursor: after the indentation of the blanked line, or after what was typed of it
    (``after_module_dot``) (a str index into ``text``)."""
    expected: str
    """The line's original text without its indentation (or the rest of it, after the
    cursor)."""
    name: str
    """The name the line uses from the other module (``f`` of ``f(x)`` or ``m.f(x)``)."""
    defined_in: str
    """The module that defines the name, relative to the workspace root (posix)."""
    use_at: int = 0
    """Where the line's first cross-file name starts in ``expected`` (the name its import
    binds: ``m`` of ``m.f(x)``), a str index (``before_name``)."""
    language: str = "python"
    """The file's language id, as the client opens it."""


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


def file_cases(source: Source, module: str, path: Path, defined: dict[str, set[str]],
               paths: dict[str, Path], first_use: bool = False) -> list[CrossCase]:
    """The cases of one file (see the module docstring), in line order; ``first_use``: only
    the first line that uses each name."""
    parsed = parse(path)
    if parsed is None:
        return []
    text, tree = parsed
    imports = imported_names(module, path, tree, defined)
    if not imports:
        return []
    lines = split_lines(text)
    candidates = function_lines(tree, lines)
    cases = []
    seen: set[tuple[str, str]] = set()
    uses = name_uses(tree, imports, defined)
    first_column: dict[int, int] = {}  # line -> where its first cross-file name starts
    for _key, node in uses:
        first_column.setdefault(node.lineno, node.col_offset)
    for key, node in uses:
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
        # ast's columns count UTF-8 bytes
        use_at = len(body.encode()[: first_column[lineno]].decode()) - len(indent)
        cases.append(CrossCase(
            source=source.name, path=_workspace_path(source, path), line=lineno - 1,
            text=buffer, offset=start + len(indent), expected=expected, name=name,
            defined_in=_workspace_path(source, defining), use_at=use_at))
    return cases


def _workspace_path(source: Source, path: Path) -> str:
    return (source.place / path.relative_to(source.folder)).as_posix()


def source_cases(source: Source, first_use: bool = False) -> list[CrossCase]:
    """Every case of a source, in path and line order (see ``file_cases``)."""
    paths = modules(source)
    defined: dict[str, set[str]] = {}
    for module, path in paths.items():
        parsed = parse(path)
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


def typed_to(case: CrossCase, chars: int) -> CrossCase:
    """``case`` with the first ``chars`` of its answer typed: the cursor after them, the rest
    of the line the answer."""
    typed = case.expected[:chars]
    return replace(case, text=case.text[: case.offset] + typed + case.text[case.offset :],
                   offset=case.offset + len(typed), expected=case.expected[len(typed) :],
                   use_at=case.use_at - len(typed))


def before_name(case: CrossCase) -> CrossCase:
    """CrossCodeEval's recipe: ``case`` typed up to its first cross-file name (``z = `` of
    ``z = scale(y, 2)``, ``if x > `` of ``if x > helpers.LIMIT:``; nothing when the name
    starts the line, as there)."""
    return typed_to(case, case.use_at)


def after_module_dot(case: CrossCase) -> CrossCase | None:
    """``case`` typed up to the dot before its name when the line reaches the name through a
    module the file imports (``other.`` of ``x = other.name(1)``), the cursor after the dot
    and the rest of the line the answer; None when it does not."""
    pattern = rf"(?<![\w.])([A-Za-z_]\w*)\.{re.escape(case.name)}(?!\w)"
    for match in re.finditer(pattern, case.expected):
        module = re.escape(match.group(1))
        imported = rf"^[ \t]*(?:from[ \t]+\S+[ \t]+)?import[ \t][^\n]*\b{module}\b"
        if re.search(imported, case.text, re.M):
            return typed_to(case, match.start() + len(match.group(1)) + 1)
    return None


_IMPORT_LIST = re.compile(r"^([ \t]*from[ \t]+[\w.]+[ \t]+import)([ \t]+[\w ,\t]+?)[ \t]*$", re.M)
"""A one-line ``from X import a, b as c`` statement: its head and its list."""


_RELATIVE_FROM = re.compile(r"[ \t]*from[ \t]+\.+")
"""A relative ``from`` import's head up to its leading dots."""


_IMPORT_PATH = re.compile(
    r"^([ \t]*import\b([^'\"\n]*)\bfrom[ \t]*['\"](?:(?:\.\./)+|\./))([^'\"\n]+['\"][ \t;]*)$",
    re.M)
"""A one-line JavaScript or TypeScript import from a relative path: the line up to its
leading ``./`` or ``../`` segments, what it binds, the rest of the path and the line."""


def _path_typed(head: str, path: str) -> int | None:
    """How much of an import's head (``from .mod import``) the import-path recipe types: a
    relative one up to its dots, one of the file's own top package with a dotted path up to
    the package's dot (``from email.`` of ``from email.errors import``); None for others."""
    dots = _RELATIVE_FROM.match(head)
    if dots is not None:
        return dots.end()
    top = re.escape(path.split("/", 1)[0])
    own = re.match(rf"[ \t]*from[ \t]+{top}\.(?=\w)", head)
    return own.end() if own is not None else None


def import_list(case: CrossCase, path: bool = False) -> CrossCase | None:
    """The one-line ``from X import ...`` statement of ``case``'s file that binds its name,
    typed up to ``import``, the cursor there and the list the answer (the file as it was,
    its use of the name below); with ``path``, only a relative one (``from .mod import``)
    typed up to its leading dots, or one from the file's own top package's dotted path typed
    up to that package's dot (``from email.``), the rest of the line the answer. In
    JavaScript and TypeScript the import from a relative path that binds it, typed up to its
    leading ``./`` or ``../`` segments, the rest of the path the answer. None for a file with
    no such line (a parenthesized list, a package)."""
    whole = case.text[: case.offset] + case.expected + case.text[case.offset :]
    found = None
    for match in _IMPORT_LIST.finditer(whole):
        bound = {part.split(" as ")[-1].strip() for part in match.group(2).split(",")}
        if case.name not in bound:
            continue
        if not path:
            found = match.end(1), match.end(), match.group(2)
        elif (typed := _path_typed(match.group(1), case.path)) is not None:
            cursor = match.start() + typed
            found = cursor, match.end(), whole[cursor : match.end()]
        break
    if found is None:
        for match in _IMPORT_PATH.finditer(whole):
            if re.search(rf"(?<![\w$]){re.escape(case.name)}(?![\w$])", match.group(2)):
                found = match.end(1), match.end(), match.group(3).rstrip()
                break
    if found is None:
        return None
    cursor, end, expected = found
    return replace(case, text=whole[:cursor] + whole[end:], offset=cursor, expected=expected,
                   line=whole.count("\n", 0, cursor), use_at=0)


def make_workspace(source: Source, case: CrossCase, root: Path) -> Path:
    """Copy the source under ``root`` (at ``source.place``) with the case's file holding its
    blanked buffer; returns the case file's path there."""
    shutil.copytree(source.folder, root / source.place, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(*COPY_IGNORED), symlinks=True)
    target = root / case.path
    target.write_text(case.text, encoding="utf-8")
    return target
