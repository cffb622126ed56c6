"""What a Python import being written may not go on with, whatever names it holds: a list
without parentheses ended after its comma, an element of a list that is no name (``import
Response Hooks``), a relative path followed by what no path is (``from ./x``). The member
rule (``member_rule``) refuses these where it rules the statement's names."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..member_keys import relative_module_key, relative_module_names

_ELEMENT = re.compile(r"\s*\(?\s*(?:\*|\w+)?(?:\s+(?:as?|as\s+\w*)?)?\s*")
"""An import list's element, possibly half written, up to what ends it: a name, then ``as``
and an alias (``Response Hooks`` is none)."""

_ELEMENT_ENDS = re.compile(r"[,)#\\;\0\n]")
"""What ends an import list's element."""


def list_cut(text: str, line: str, after: int) -> bool:
    """Whether ``text`` goes on after an unparenthesized import list's last comma with
    something other than a name (a line's end, a comment) where ``line`` did not (``after``:
    where the list starts in ``text``)."""
    if text[after:].lstrip().startswith("("):
        return False
    comma = text.rfind(",", after)
    if comma < 0:
        return False
    rest = text[comma + 1 :].lstrip(" \t")
    at = len(text) - len(rest)
    return at >= len(line) and rest != "" and not (rest[0].isalnum() or rest[0] in "_\\")


def element_cut(text: str, line: str, after: int) -> bool:
    """Whether ``text`` writes in an import list's element something no element is (a second
    word after a name, other than ``as`` and its alias) where ``line`` did not (``after``:
    where the list starts in ``text``)."""
    start = max(text.rfind(",", after) + 1, after)
    end = _ELEMENT_ENDS.search(text, start)
    element = text[start : end.start() if end else len(text)]
    if _ELEMENT.fullmatch(element) or start + len(element) < len(line):
        return False
    return _ELEMENT.fullmatch(element[: max(0, len(line) - start)]) is not None


def path_cut(text: str, line: str, known: Callable[[str], bool]) -> bool:
    """Whether ``text`` goes on after the path of a relative import with something no path
    is followed by (``from ./x``, ``from .../x``), where ``line`` did not (a space, a line
    continuation or the end may follow it); only where ``known`` holds the key of the
    path's start or of one of its packages (``relative_module_key``: the document's)."""
    names = relative_module_names(text)
    if not names:
        return False
    dots = names[0][0]
    # Fewer dots than typed, then each name's package (the first one's is all the dots).
    starts = [dots[:n] for n in range(1, len(dots))] + [p for p, _, _ in names]
    if not any(known(relative_module_key(p)) for p in starts):
        return False
    end = names[-1][1] + len(names[-1][2])
    return len(line) <= end < len(text) and text[end] not in " \t\\\0"
