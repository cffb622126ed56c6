"""The cases of ``bench crossfile --recent-edits``: which lines fit, and the edit each makes.

A case is a ``bench crossfile`` line (``crossfile_cases``) that calls a function of another
module of the package through that module (``other.name(...)``), where the case's file names
the function nowhere else (so nothing in it shows the edit). Two edits (``--edit``):

- ``rename``: the function's name gets a suffix from ``SUFFIXES`` where it is defined; the
  expected line calls the new name.
- ``parameter``: a new required parameter, named from ``PARAMETERS``, goes last in the
  function's signature (``, strict``; ``(strict)`` for none; ``, *, strict`` keyword-only
  after parameters with defaults); a function taking ``**kwargs`` does not fit. The expected
  line is the original call with the new argument last, in keyword form (``strict=strict``).

Either way the edit is typed as a user types it, one key at a time, at ``EditCase.at`` in the
defining module.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .crossfile_cases import CrossCase, Source

EDITS = ("rename", "parameter")
"""The edits ``--edit`` chooses among."""

SUFFIXES = ("_v2", "_checked", "_impl", "_strict")
"""What a rename appends to the function's name (by the case's place in the list): names the
model cannot guess without seeing the edit."""

PARAMETERS = ("strict", "trace_id", "limit_bytes", "retry_budget", "dry_run", "tenant_key")
"""The new parameter's name (by the case's place in the list, the next one when the case's
file or the defining module already uses it): names the model cannot guess either."""


@dataclass(frozen=True, slots=True)
class EditCase:
    """A cross-file case whose function is edited in its module before the line is asked."""

    case: CrossCase
    """The blanked line as the package has it (``case.expected``)."""
    new_name: str
    """The name the edit brings: the function's new name, or the new parameter's."""
    expected: str
    """The blanked line after the edit (calling the new name, or passing the parameter)."""
    at: int
    """Where the edit is typed in the defining module's text (a str index)."""
    typed: str
    """What is typed there, one key at a time."""


@dataclass(frozen=True, slots=True)
class Site:
    """Where a case's function is defined, as an edit needs it."""

    name_end: int
    """Where the function's name ends in its ``def`` line (a str index)."""
    text: str
    """The defining module's text."""


def fitting(source: Source, pool: list[CrossCase]) -> list[tuple[CrossCase, Site]]:
    """The cases of ``pool`` fit for an edit (see the module docstring), each with the site of
    its function's definition."""
    out = []
    for case in pool:
        name = re.escape(case.name)
        if not re.search(rf"(?<![\w.])[A-Za-z_]\w*\.{name}\(", case.expected):
            continue
        if re.search(rf"(?<!\w){name}(?!\w)", case.text):
            continue  # the file names it elsewhere: the edit would show there
        defining = source.folder / Path(case.defined_in).relative_to(source.place)
        try:
            text = defining.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        # At the top level first (a method of the same name is another function), then
        # indented (defined under an ``if`` or a ``try``).
        found = (re.search(rf"^(?:async[ \t]+)?def[ \t]+({name})\(", text, re.M)
                 or re.search(rf"^[ \t]+(?:async[ \t]+)?def[ \t]+({name})\(", text, re.M))
        if found is not None:
            out.append((case, Site(found.end(1), text)))
    return out


def rename_cases(source: Source, pool: list[CrossCase]) -> list[tuple[CrossCase, int]]:
    """The cases of ``pool`` fit for a rename, each with the offset just after the function's
    name in its ``def`` line."""
    return [(case, site.name_end) for case, site in fitting(source, pool)]


def renamed(case: CrossCase, def_offset: int, index: int) -> EditCase:
    """``case`` with its function renamed (the ``index``-th suffix)."""
    suffix = SUFFIXES[index % len(SUFFIXES)]
    new = case.name + suffix
    expected = re.sub(rf"(?:(?<=\.)|^){re.escape(case.name)}(?=\()", new, case.expected,
                      count=1)
    return EditCase(case, new, expected, def_offset, suffix)


def with_parameter(case: CrossCase, site: Site, index: int) -> EditCase | None:
    """``case`` with a new last parameter in its function (the ``index``-th name of
    ``PARAMETERS`` not used yet), passed in its line; None when the signature takes
    ``**kwargs`` or the line's call does not close on the line."""
    signature = signature_end(site.text, site.name_end)
    call = call_end(case.expected, case.name)
    if signature is None or call is None:
        return None
    words = set(re.findall(r"\w+", case.text)) | set(re.findall(r"\w+", site.text))
    names = [PARAMETERS[(index + i) % len(PARAMETERS)] for i in range(len(PARAMETERS))]
    name = next((n for n in names if n not in words), None)
    if name is None:
        return None
    at, before = signature
    pos, lead = call
    expected = case.expected[:pos] + f"{lead}{name}={name}" + case.expected[pos:]
    return EditCase(case, name, expected, at, before + name)


def signature_end(text: str, name_end: int) -> tuple[int, str] | None:
    """(where a new last parameter goes, what is typed before its name) in the signature
    whose ``(`` is at ``name_end`` of ``text``; None for one with ``**kwargs`` or unreadable."""
    starts = _line_starts(text, name_end)
    prev: tokenize.TokenInfo | None = None
    defaults = star = False
    for token, depth in _bracketed(text[name_end:]):
        if depth == 1 and token.string == "**":
            return None
        if depth == 1 and token.string == "*":
            star = True
        if depth == 1 and token.string == "=":
            defaults = defaults or not star
        if depth == 0:  # the closing parenthesis
            if prev is None:
                return None
            row, col = prev.end
            lead = "" if prev.string == "(" else " " if prev.string == "," else ", "
            return starts[row - 1] + col, lead + ("*, " if defaults and not star else "")
        prev = token
    return None


def call_end(line: str, name: str) -> tuple[int, str] | None:
    """(where a new last argument goes, what comes before it) in ``line``'s first call of
    ``name`` (after a dot or first on the line); None when that call does not close on it."""
    tokens = list(_significant(line))
    for i, token in enumerate(tokens[:-1]):
        after_dot = i == 0 or tokens[i - 1].string == "."
        if token.string == name and after_dot and tokens[i + 1].string == "(":
            break
    else:
        return None
    start = tokens[i + 1].start[1]
    prev = None
    for token, depth in _bracketed(line[start:]):
        if depth == 0:
            if prev is None:
                return None
            lead = "" if prev.string == "(" else " " if prev.string == "," else ", "
            return start + prev.end[1], lead
        prev = token
    return None


def _significant(text: str) -> Iterator[tokenize.TokenInfo]:
    """``text``'s tokens without comments and line ends, until it cannot be read on."""
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
               tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in skipped:
                yield token
    except (tokenize.TokenError, SyntaxError):
        return


def _bracketed(text: str) -> Iterator[tuple[tokenize.TokenInfo, int]]:
    """The tokens of ``text`` (which starts with ``(``), each with the bracket depth after it,
    up to and including the one that closes the first bracket."""
    depth = 0
    for token in _significant(text):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        yield token, depth
        if depth <= 0:
            return


def _line_starts(text: str, offset: int) -> list[int]:
    """Where each line of ``text[offset:]`` starts, as indices into ``text``."""
    starts = [offset]
    pos = text.find("\n", offset)
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts
