"""The keys of known members (``PromptParts.members``, ``GenerateRequest.members``), spelled
in one place: completion finds what each key offers, the engine's member rule keeps the
names written after it to them.

- A qualifier (``errors``, ``pkg.mod``): the names it offers after its dot.
- The head of a Python import statement (``from pkg.mod import``, ``import_list_key``): the
  names its list may hold.
- ``import '`` or ``import "`` (the quote typed, ``import_path_key``): every relative path the
  string of a JavaScript or TypeScript import or ``require`` may hold.
- The package a relative Python import names so far (``from .``, ``from ..sub.``,
  ``relative_module_key``): the modules and packages that may come next in its path; an
  absolute one's dotted path (``pkg.sub``, ``absolute_module_names``) is a qualifier.
"""

from __future__ import annotations

import re

FROM_IMPORT = re.compile(r"\s*from\s+((\.*)([\w.]*))\s+import(?=[\s(]|$)")
"""The head of a ``from X import`` statement at a line's start: X as written, its leading
dots, the module after them."""

IMPORT_STRING = re.compile(r"(?:\bfrom|\bimport|\brequire)\s*\(?\s*(['\"])([^'\"\n]*)")
"""The string of a JavaScript or TypeScript import or ``require``: its quote and its text."""


RELATIVE_FROM = re.compile(r"\s*from\s+(\.+)([\w.]*)")
"""The path of a relative ``from`` import at a line's start: its leading dots, the rest."""

ABSOLUTE_PATH = re.compile(r"\s*(?:from|import)\s+([A-Za-z_]\w*)((?:\.\w*)*)")
"""The dotted path of an absolute ``from`` or ``import`` at a line's start: its first name,
the rest."""


def import_list_key(written: str) -> str:
    """The key of the names a ``from written import`` list may hold."""
    return f"from {written} import"


def import_path_key(quote: str) -> str:
    """The key of the paths an import string opened by ``quote`` may hold."""
    return f"import {quote}"


def relative_module_key(package: str) -> str:
    """The key of what may come next in the path of ``from package`` (``.``, ``..sub.``)."""
    return f"from {package}"


def relative_module_names(line: str) -> list[tuple[str, int, str]]:
    """(package, start, name) of each name in the path of the relative ``from`` import
    ``line`` starts with, ``package`` the path before it (``from ..sub.mod`` gives ``..`` with
    ``sub`` and ``..sub.`` with ``mod``; a name still empty is one too); none where ``line``
    starts with no such import."""
    match = RELATIVE_FROM.match(line)
    if match is None:
        return []
    out = []
    start = match.start(2)
    for name in match.group(2).split("."):
        out.append((line[match.start(1) : start], start, name))
        start += len(name) + 1
    return out


def relative_module_typed(line: str) -> tuple[str, str] | None:
    """(package, the name typed after it) where ``line`` ends in the path of a relative
    ``from`` import (``("..sub.", "mo")`` of ``from ..sub.mo``); None elsewhere."""
    return _last_typed(relative_module_names(line), len(line))


def absolute_module_names(line: str) -> list[tuple[str, int, str]]:
    """(package, start, name) of each name after a dot in the path of the absolute ``from``
    or ``import`` statement ``line`` starts with, ``package`` the dotted path before it
    (``from pkg.sub.mod`` gives ``pkg`` with ``sub`` and ``pkg.sub`` with ``mod``; a name
    still empty is one too); none where ``line`` starts with no such statement."""
    match = ABSOLUTE_PATH.match(line)
    if match is None or not match.group(2):
        return []
    out = []
    package, start = match.group(1), match.start(2) + 1
    for name in match.group(2)[1:].split("."):
        out.append((package, start, name))
        package, start = f"{package}.{name}", start + len(name) + 1
    return out


def absolute_module_typed(line: str) -> tuple[str, str] | None:
    """(package, the name typed after it) where ``line`` ends in the dotted path of an
    absolute ``from`` or ``import`` after a dot (``("pkg.sub", "mo")`` of ``from
    pkg.sub.mo``); None elsewhere."""
    return _last_typed(absolute_module_names(line), len(line))


def _last_typed(names: list[tuple[str, int, str]], end: int) -> tuple[str, str] | None:
    """(package, name) of the last of a path's ``names`` where it ends at ``end`` (the line's
    end); None where there is none or the line goes on after it."""
    if not names or names[-1][1] + len(names[-1][2]) != end:
        return None
    return names[-1][0], names[-1][2]
