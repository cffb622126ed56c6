"""Where ``bench crossfile`` draws its cases: Python packages and npm packages found on the
machine, split into those tuned on and those reported on; and the oracle's text.

The split: the Python packages are listed (``PYTHON_SPLIT``); an npm package goes to one side by
a hash of its name, so the same package is on the same side on every machine, whichever
packages a machine has.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

from ..completion.related import tags
from . import js_uses
from .crossfile_cases import CrossCase, Source, resolve_source
from .crossfile_cases import source_cases as python_cases
from .crossfile_names import HELD_OUT_PACKAGES
from .python_uses import parse, split_lines

PYTHON_SPLIT = {
    "report": HELD_OUT_PACKAGES,
    "tune": ("email", "json", "multiprocessing", "logging", "http", "xml.etree", "sqlite3",
             "tomllib", "wsgiref", "xmlrpc", "ctypes", "idlelib"),
}
"""Standard-library packages on each side of the split."""

NODE_MODULES = ("/usr/lib/node_modules", "/usr/local/lib/node_modules",
                "~/.cache/lsp-coder/vscode-toolchain-*/node_modules")
"""Where npm packages are looked for (with each package's own ``node_modules`` one level down:
npm's bundled dependencies)."""

LANGUAGES = {"python": ("python",), "js": ("javascript", "typescript"), "ts": ("typescript",)}
"""What each name of ``--languages`` draws: the languages of its cases."""


def family(language: str) -> str:
    """The family a case's language is drawn and counted in (``--cases`` is per family, and
    issue 46's targets are): "js" for JavaScript and TypeScript, else the language."""
    return "js" if language in LANGUAGES["js"] else language


NPM_PREFIX = "npm:"
"""How an npm package is named on the command line (``npm:express``)."""

MIN_JS_FILES = 2
"""An npm package with fewer JavaScript or TypeScript files has no file to import from."""

ORACLE_LINES = 40
"""A definition longer than this shows its signature and members (as the server shows it)."""


def side(name: str) -> str:
    """``tune`` or ``report``: the side of the split an npm package is on."""
    return "report" if hashlib.sha256(name.encode()).digest()[0] % 2 == 0 else "tune"


def npm_packages(roots: tuple[str, ...] = NODE_MODULES) -> dict[str, Path]:
    """Package name -> folder for every npm package under ``roots`` with at least
    ``MIN_JS_FILES`` source files (the first found of a name wins), sorted by name."""
    found: dict[str, Path] = {}
    folders: list[Path] = []
    for pattern in roots:
        expanded = Path(pattern).expanduser()
        folders += sorted(Path(expanded.anchor).glob(str(expanded.relative_to(expanded.anchor))))
    for folder in folders:
        for manifest in _manifests(folder):
            package = manifest.parent
            try:
                name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
            except (OSError, ValueError, AttributeError):
                continue
            if (isinstance(name, str) and name not in found
                    and len(js_uses.files(package)) >= MIN_JS_FILES):
                found[name] = package
    return dict(sorted(found.items()))


def _manifests(folder: Path) -> list[Path]:
    """The ``package.json`` of each package in a ``node_modules`` folder (scoped ones too),
    and of the packages in their own ``node_modules``."""
    out = []
    for top in sorted(folder.glob("*/package.json")) + sorted(folder.glob("@*/*/package.json")):
        out.append(top)
        nested = top.parent / "node_modules"
        out += sorted(nested.glob("*/package.json")) + sorted(nested.glob("@*/*/package.json"))
    return out


def case_languages(names: str) -> set[str]:
    """The languages of the cases that ``--languages`` ``names`` (comma-separated keys of
    ``LANGUAGES``) draws; ValueError for a name it does not know."""
    wanted: set[str] = set()
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in LANGUAGES:
            raise ValueError(f"{name!r} is not one of {', '.join(LANGUAGES)}")
        wanted.update(LANGUAGES[name])
    return wanted


def split_sources(split: str, languages: set[str],
                  roots: tuple[str, ...] = NODE_MODULES) -> list[str]:
    """The sources of one side of the split with cases in ``languages``
    (``case_languages``)."""
    names: list[str] = []
    if "python" in languages:
        names += PYTHON_SPLIT[split]
    if languages & {"javascript", "typescript"}:
        names += [NPM_PREFIX + n for n in npm_packages(roots) if side(n) == split]
    return names


def resolve(name: str, roots: tuple[str, ...] = NODE_MODULES) -> Source:
    """``npm:NAME`` (a package found under ``roots``), a folder, or an installed Python
    package; ValueError otherwise."""
    if not name.startswith(NPM_PREFIX):
        return resolve_source(name)
    package = npm_packages(roots).get(name[len(NPM_PREFIX):])
    if package is None:
        raise ValueError(f"{name!r}: no such npm package under {', '.join(roots)}")
    return Source(name, package, Path(name[len(NPM_PREFIX):]), name[len(NPM_PREFIX):])


def is_js(source: Source) -> bool:
    """An npm package, or a folder with a ``package.json`` or without Python files."""
    return (source.name.startswith(NPM_PREFIX) or (source.folder / "package.json").is_file()
            or not any(source.folder.rglob("*.py")))


def cases(source: Source, first_use: bool = False) -> list[CrossCase]:
    """Every case of a source, in path and line order, by its language."""
    return js_uses.source_cases(source, first_use) if is_js(source) else python_cases(
        source, first_use)


def files(source: Source) -> list[str]:
    """The source's files of its language, as workspace-relative paths (the tabs' choice)."""
    paths = (js_uses.files(source.folder) if is_js(source)
             else [p for p in source.folder.rglob("*.py") if "__pycache__" not in p.parts])
    return sorted((source.place / p.relative_to(source.folder)).as_posix() for p in paths)


def oracle(root: Path, case: CrossCase) -> str:
    """The true definition of the case's name in its defining file (under the workspace
    ``root``): the whole of it up to ``ORACLE_LINES`` lines, else its signature and members;
    "" when it is not found there."""
    found = definition_rows(root, case)
    if found is None:
        return ""
    lines, first, last = found
    return _shown(lines, first, last, root / case.defined_in, case.name)


def definition_rows(root: Path, case: CrossCase) -> tuple[list[str], int, int] | None:
    """The defining file's lines (under the workspace ``root``) and the first and last rows
    of the top-level definition of the case's name there (from its first decorator); None
    when it is not found."""
    path = root / case.defined_in
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = split_lines(text)  # as ast and tree-sitter count rows: not at form feeds
    if case.language == "python":
        parsed = parse(path)
        for node in parsed[1].body if parsed is not None else []:
            if case.name in _python_names(node):
                first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list",
                                                                        []))])
                return lines, first - 1, (node.end_lineno or node.lineno) - 1
        return None
    rows = _js_definition(text, tags.language_of(path.suffix) or "javascript", case.name)
    return None if rows is None else (lines, *rows)


def _js_definition(text: str, language: str, name: str) -> tuple[int, int] | None:
    """The first and last rows of the top-level statement defining ``name`` (a function, a
    class, a variable, ``exports.name = ...``, exported or not), else of the ``name: ...``
    pair of an object exported whole (``module.exports = {name: ...}``); None if none."""
    grammar = tags.grammar(language)
    if grammar is None:
        return None
    from tree_sitter import Parser

    root = Parser(grammar).parse(text.encode()).root_node
    pairs = []
    for statement in root.children:
        inner = statement.child_by_field_name("declaration") or statement
        defined = inner.child_by_field_name("name")
        names = [defined] if defined is not None else []
        names += [d.child_by_field_name("name") for d in inner.children
                  if d.type == "variable_declarator"]
        if inner.type == "expression_statement" and inner.children:
            target = inner.children[0].child_by_field_name("left")
            if target is not None and target.type == "member_expression":
                names.append(target.child_by_field_name("property"))
            value = inner.children[0].child_by_field_name("right")
            if value is not None and value.type == "object":
                pairs += [p for p in value.children if p.type == "pair"]
        if any(n is not None and n.text.decode(errors="replace") == name for n in names):
            return statement.start_point[0], statement.end_point[0]
    for pair in pairs:
        key = pair.child_by_field_name("key")
        if key is not None and key.text.decode(errors="replace") == name:
            return pair.start_point[0], pair.end_point[0]
    return None


def _python_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {t.id for t in targets if isinstance(t, ast.Name)}
    return set()


def _shown(lines: list[str], start: int, end: int, path: Path, name: str) -> str:
    """Lines ``start`` to ``end``; when longer than ``ORACLE_LINES``, as the server renders a
    long definition (``tags.render``)."""
    if end - start < ORACLE_LINES:
        return "".join(lines[start : end + 1])
    language = tags.language_of(path.suffix)
    if language is not None:
        data = "".join(lines).encode()
        found = tags.definitions(language, data)
        for tag in found:
            if tag.name == name and tag.start_line >= start:
                return tags.render(tag, lines, found)
    return "".join(lines[start : start + ORACLE_LINES])
