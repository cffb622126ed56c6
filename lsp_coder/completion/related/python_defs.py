"""Python: the definitions of the imported names the cursor uses, by ``ast`` and the imports.

``from pkg.mod import Name`` / ``import pkg.mod as m`` in the open document are resolved to
files of the workspace folders or of the document's own package (never to installed packages),
and the names used near the cursor (``Name``, ``m.func``) to what those files define. A class
shows its fields and method signatures, a function its signature and the first lines of its
docstring; never whole bodies. A name a package's ``__init__`` re-exports is followed there.
A module the code uses as an object (``from . import protocols`` then ``protocols.x``) also
shows its outline: the name being typed after the dot may be any of its names.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .python_render import Imported, ParsedModule, parse_module
from .text import FileReads

IMPORT_START = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t]+\w)", re.M)

REEXPORT_HOPS = 3
"""How many ``from .x import Name`` re-exports are followed to find a definition."""

IMPORT_SCAN_CHARS = 65_536
"""Imports are looked for in this much of the document's start (and in the window at the
cursor), so a huge document costs no more per request than a long one."""

OUTLINES_MAX = 2
"""At most this many modules used as objects get their outline."""

OUTLINE_ENTRIES = 40
"""At most this many top-level names of a module's outline (in the file's order)."""

MODULES_CACHED = 256
"""Parsed defining modules kept (keyed by path, checked against the file's size and time)."""


@dataclass(frozen=True, slots=True)
class Definition:
    """A definition to show: where it is and its rendered text."""

    path: Path
    """The defining file."""
    name: str
    """The name defined."""
    text: str
    """Signature, docstring's first lines, a class's fields and methods."""


def document_imports(text: str, window: str) -> dict[str, Imported]:
    """``imports`` of the document's start (``IMPORT_SCAN_CHARS``) and of the window at the
    cursor (a function's own imports)."""
    return imports(text[:IMPORT_SCAN_CHARS]) | imports(window)


def imports(text: str) -> dict[str, Imported]:
    """Local name -> what it was imported from, for every import statement of ``text``.

    Statements are found and parsed one at a time, so a syntax error elsewhere in the
    document (the line being typed) costs nothing.
    """
    out: dict[str, Imported] = {}
    for match in IMPORT_START.finditer(text):
        out.update(_parse_import(_statement_at(text, match.start()).strip()))
    return out


@lru_cache(maxsize=4096)
def _parse_import(statement: str) -> dict[str, Imported]:
    try:
        return _names_of(ast.parse(statement).body[0])
    except (SyntaxError, IndexError, ValueError, RecursionError):
        return {}


def _statement_at(text: str, start: int) -> str:
    """The import statement starting at ``start``: its line, or to ``)`` when parenthesised,
    or over backslash-continued lines (bounded)."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    line = text[start:end]
    if "(" in line and ")" not in line:
        close = text.find(")", end, end + 4096)
        end = close + 1 if close >= 0 else end
    while text[start:end].rstrip().endswith("\\") and end < len(text):
        nxt = text.find("\n", end + 1)
        end = len(text) if nxt < 0 else nxt
    return text[start:end]


def _names_of(node: ast.stmt) -> dict[str, Imported]:
    out: dict[str, Imported] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                out[alias.asname] = Imported(alias.name, 0, "")
            else:  # ``import a.b`` binds ``a``; ``a.b.f`` is followed through the dots
                top = alias.name.split(".")[0]
                out[top] = Imported(top, 0, "")
    elif isinstance(node, ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                out[alias.asname or alias.name] = Imported(node.module or "", node.level,
                                                           alias.name)
    return out


def without_imports(window: str) -> str:
    """``window`` less its import lines (a name imported is not yet a name used)."""
    return "\n".join(line for line in window.split("\n") if not IMPORT_START.match(line))


def used_names(window: str) -> list[str]:
    """Dotted names used in ``window`` (``a``, ``a.b.c``), in order of first use; a chain
    never goes on over a line's end (``m.`` typed at the end of one line is ``m``)."""
    seen: dict[str, None] = {}
    for match in re.finditer(r"[A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*", window):
        seen.setdefault(re.sub(r"[ \t]+", "", match.group()), None)
    return list(seen)


class PythonDefinitions:
    """Resolves the names a document uses to their definitions (worker thread).

    Args:
        max_file_bytes: a module larger than this is not read.
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, max_file_bytes: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self.max_file_bytes = max_file_bytes
        self._modules = FileReads(max_file_bytes, lambda _file, data: parse_module(data),
                                  MODULES_CACHED, allows)

    def find(self, imported: dict[str, Imported], used: list[str], path: Path | None,
             roots: tuple[Path, ...], limit: int = 8) -> list[Definition]:
        """The definitions of the ``used`` names (``used_names``) that ``imported`` (``imports``
        of the document at ``path``) names, in order of first use, at most ``limit``, then the
        outlines of the first ``OUTLINES_MAX`` modules used as objects (``protocols.x``, or
        ``domreg.`` typed on the cursor's line, which comes first in ``used``), less the names
        shown whole."""
        if not imported:
            return []
        search = search_roots(path, roots)
        out: list[Definition] = []
        seen: set[tuple[Path, str]] = set()
        outlined: list[Path] = []
        for dotted in used:
            parts = dotted.split(".")
            target = imported.get(parts[0])
            if target is None:
                continue
            found, module = self._resolve(target, parts[1:], path, search)
            if found is not None and (found.path, found.name) not in seen and len(seen) < limit:
                seen.add((found.path, found.name))
                out.append(found)
            if module is not None and module not in outlined and len(outlined) < OUTLINES_MAX:
                outlined.append(module)
        for module in outlined:
            text = self._outline(module, {name for file, name in seen if file == module})
            if text:
                out.append(Definition(module, "", text))
        return out

    def _resolve(self, target: Imported, rest: list[str], path: Path | None,
                 search: tuple[Path, ...]) -> tuple[Definition | None, Path | None]:
        """The definition that ``target`` followed by the attributes ``rest`` names, and the
        module file the code uses as an object on the way (``m`` of ``m.f``), if any."""
        base = path.parent if path is not None else None
        module = target.module
        names = ([target.attr] if target.attr else []) + rest
        # ``from pkg import mod``: the name may be a submodule; ``import a`` then ``a.b.f``.
        while names:
            sub = f"{module}.{names[0]}" if module else names[0]
            if find_module(sub, target.level, base, search) is None:
                break
            module, names = sub, names[1:]
        file = find_module(module, target.level, base, search)
        if file is None:
            return None, None
        as_object = file if len(names) <= len(rest) else None
        if not names:
            return None, as_object  # a module used as a whole: only its outline
        return self._lookup(file, names[0], search, REEXPORT_HOPS), as_object

    def _outline(self, file: Path, shown: set[str]) -> str:
        """The outline of the module at ``file`` (``python_render``), less the ``shown``
        names, at most ``OUTLINE_ENTRIES`` entries."""
        parsed = self._module(file)
        if parsed is None:
            return ""
        entries = [text for name, text in parsed.outline if name not in shown]
        return "".join(entries[:OUTLINE_ENTRIES])

    def _lookup(self, file: Path, name: str, search: tuple[Path, ...],
                hops: int) -> Definition | None:
        parsed = self._module(file)
        if parsed is None:
            return None
        if name in parsed.defined:
            return Definition(file, name, parsed.defined[name])
        if hops <= 0:
            return None
        onward = [parsed.reexports[name]] if name in parsed.reexports else parsed.star
        for target in onward:
            attr = target.attr or name
            sub = find_module(f"{target.module}.{attr}" if target.module else attr,
                               target.level, file.parent, search)
            if sub is not None and target.attr:
                continue  # a submodule re-exported by name: nothing short to show
            nxt = find_module(target.module, target.level, file.parent, search)
            if nxt is not None and nxt != file:
                found = self._lookup(nxt, attr, search, hops - 1)
                if found is not None:
                    return found
        return None

    def _module(self, file: Path) -> ParsedModule | None:
        """The parsed module at ``file`` (cached while its size and time stay the same);
        None when it cannot be read or is too large."""
        return self._modules.get(file)


def search_roots(path: Path | None, roots: tuple[Path, ...]) -> tuple[Path, ...]:
    """Where absolute imports are looked for: the folder above the document's top package,
    its own folder, then each workspace folder and its ``src``."""
    out: list[Path] = []
    if path is not None:
        top = path.parent
        while (top / "__init__.py").is_file() and top.parent != top:
            top = top.parent
        out += [top, path.parent]
    for root in roots:
        out += [root, root / "src"]
    return tuple(dict.fromkeys(out))


def find_module(module: str, level: int, base: Path | None,
                 search: tuple[Path, ...]) -> Path | None:
    """The file of ``module`` (``pkg/mod.py`` or ``pkg/mod/__init__.py``), or None."""
    if level:
        if base is None:
            return None
        start = base
        for _ in range(level - 1):
            start = start.parent
        bases: tuple[Path, ...] = (start,)
    else:
        bases = search
    rel = Path(*module.split(".")) if module else Path()
    for root in bases:
        for candidate in (root / rel.with_suffix(".py") if module else None,
                          root / rel / "__init__.py"):
            if candidate is not None and candidate.is_file():
                return candidate
    return None
