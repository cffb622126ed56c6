"""The open file's import statements that bind a name the short prompt's lines use.

A short prompt for a cold cache leaves the file's import lines out (all of them would make the
first answer in a file just opened read them; the full prompt has them). Then a name the
window uses comes without its binding, and the model guesses where it is from (``asyncio.``
for ``events.``, a method for an imported function). The statements kept here bind a name
that the window's lines above the cursor or below it use: a few lines, read with the scope
lines at the window's front (``short_window.ShortWindows.scoped``). The cursor's own line
does not count, so typing on it never changes the front of the prompt, and while the cache
holds a document's last short prompt the next one keeps its statements
(``ShortWindows.kept_head``) until the window moves.

By text alone, for any language ``import_head`` reads: a statement's names are its
identifiers outside string literals, less the import words; after Python's ``from ...
import`` only the names imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable

IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
"""A name (JavaScript's may hold ``$``)."""

STRING = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`]*`|<[^>\n]*>")
"""A string literal (a module specifier) or a C include's ``<path>``: no names there."""

IMPORT_WORDS = frozenset({"import", "from", "as", "require", "const", "let", "var", "type",
                          "typeof", "export", "default", "await", "include", "define"})
"""Words of an import statement that are not names it binds."""


def statements(imports: str) -> list[str]:
    """``imports`` (whole lines) as statements: a line inside open brackets or after a
    backslash continues the one before."""
    out: list[str] = []
    depth, continued = 0, False
    for line in imports.splitlines(keepends=True):
        if (depth > 0 or continued) and out:
            out[-1] += line
        else:
            out.append(line)
        code = STRING.sub("", line)
        depth = max(0, depth + sum(code.count(c) for c in "([{") -
                    sum(code.count(c) for c in ")]}"))
        continued = line.rstrip().endswith("\\")
    return out


def bound_names(statement: str) -> set[str]:
    """The names ``statement`` may bind (a module path's parts too, but for Python's
    ``from``)."""
    code = STRING.sub("", statement)
    head = code.lstrip()
    if head.startswith("from") and re.search(r"\bimport\b", head):
        code = re.split(r"\bimport\b", head, maxsplit=1)[1]
    return set(IDENTIFIER.findall(code)) - IMPORT_WORDS


def imports_used(imports: str, above: str, below: str, room: int,
                 size: Callable[[str], int] = len) -> str:
    """The statements of ``imports`` that bind a name the window's lines ``above`` and
    ``below`` the cursor line use and that ``above`` does not hold, in file order, their
    ``size`` (characters, or the prompt's tokens) within ``room`` (the last ones kept: a
    file's own modules are imported last)."""
    if not imports or room <= 0:
        return ""
    used = set(IDENTIFIER.findall(above)) | set(IDENTIFIER.findall(below))
    shown = {line.strip() for line in above.splitlines()}
    kept = [s if s.endswith("\n") else s + "\n" for s in statements(imports)
            if bound_names(s) & used and s.splitlines()[0].strip() not in shown]
    total = 0
    for i in range(len(kept) - 1, -1, -1):
        total += size(kept[i])
        if total > room:
            return "".join(kept[i + 1 :])
    return "".join(kept)
