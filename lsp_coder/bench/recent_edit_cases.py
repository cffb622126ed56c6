"""The cases of ``bench crossfile --recent-edits``: which lines fit, and the edit each makes.

A case is a ``bench crossfile`` line (``crossfile_cases``) that calls a function of another
module of the package through that module (``other.name(...)``), where the case's file names
the function nowhere else (so nothing in it shows the edit). Three edits (``--edit``):

- ``rename``: the function's name gets a suffix from ``SUFFIXES`` where it is defined; the
  expected line calls the new name.
- ``parameter``: a new required parameter, named from ``PARAMETERS``, goes last in the
  function's signature (``, strict``; ``(strict)`` for none; ``, *, strict`` keyword-only
  after parameters with defaults); a function taking ``**kwargs`` does not fit. The expected
  line is the original call with the new argument last, in keyword form (``strict=strict``;
  where the parameter is not keyword-only, ``strict`` passed by place is right too).
- ``parameter-local``: the same, but the parameter is named after a name the calling
  function has bound above the line (a parameter or a local it assigned, not one the call
  already passes): the expected line passes what the caller has, as a user would after
  adding a parameter it has a value for. A line outside a function does not fit.

Either way the edit is typed as a user types it, one key at a time, at ``EditCase.at`` in the
defining module.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .crossfile_cases import CrossCase, Source
from .scoring import first_line

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
    alternatives: tuple[str, ...] = ()
    """Other lines as right as ``expected`` (the new argument passed by place)."""
    passed: bool = False
    """The edit is a new parameter (the line must pass it), not a new name."""


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


def with_parameter(case: CrossCase, site: Site, index: int,
                   local: bool = False) -> EditCase | None:
    """``case`` with a new last parameter in its function, passed in its line: named the
    ``index``-th of ``PARAMETERS`` not used yet, or with ``local`` the ``index``-th name the
    calling function has bound above the line (``caller_names``). None when the signature
    takes ``**kwargs``, the line's call does not close on the line, or no name fits."""
    signature = signature_end(site.text, site.name_end)
    call = call_end(case.expected, case.name)
    if signature is None or call is None:
        return None
    if local:
        taken = set(re.findall(r"\w+", case.expected)) | set(
            re.findall(r"\w+", site.text[site.name_end : signature[0]]))
        names = [n for n in caller_names(case) if n not in taken]
        name = names[index % len(names)] if names else None
    else:
        words = set(re.findall(r"\w+", case.text)) | set(re.findall(r"\w+", site.text))
        names = [PARAMETERS[(index + i) % len(PARAMETERS)] for i in range(len(PARAMETERS))]
        name = next((n for n in names if n not in words), None)
    if name is None:
        return None
    at, before, keyword_only = signature
    pos, lead, keywords = call
    expected = case.expected[:pos] + f"{lead}{name}={name}" + case.expected[pos:]
    by_place = () if keyword_only or keywords else (
        case.expected[:pos] + lead + name + case.expected[pos:],)
    return EditCase(case, name, expected, at, before + name, by_place, passed=True)


NOT_ARGUMENTS = frozenset({"self", "cls", "_"})
"""Names a caller has that are no value to pass."""


def caller_names(case: CrossCase) -> list[str]:
    """The names the function around ``case``'s line binds above it (its parameters and what
    it assigns, not a name it declares ``global`` or ``nonlocal``), nearest the line first;
    empty outside a function or when the file does not parse."""
    lines = case.text.split("\n")
    blank = lines[case.line]
    lines[case.line] = blank[: len(blank) - len(blank.lstrip())] + "pass"
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return []
    row = case.line + 1
    around = None
    for node in ast.walk(tree):
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body[0].lineno <= row <= (node.end_lineno or 0)
                and (around is None or node.lineno > around.lineno)):
            around = node
    if around is None:
        return []
    bound: dict[str, int] = {}
    arguments = around.args
    for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        bound[arg.arg] = around.lineno
    outer: set[str] = set()
    for node in _own_nodes(around):
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                and node.lineno < row):
            bound[node.id] = max(bound.get(node.id, 0), node.lineno)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            outer.update(node.names)
    ordered = sorted(bound, key=lambda n: -bound[n])
    return [n for n in ordered if n not in NOT_ARGUMENTS and n not in outer]


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not those of functions, classes, lambdas or
    comprehensions inside it (their names are not the function's)."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
              ast.SetComp, ast.DictComp, ast.GeneratorExp)
    todo = list(getattr(function, "body", []))
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node)
                    if not isinstance(child, nested))


def signature_end(text: str, name_end: int) -> tuple[int, str, bool] | None:
    """(where a new last parameter goes, what is typed before its name, whether it is then
    keyword-only) in the signature whose ``(`` is at ``name_end`` of ``text``; None for one
    with ``**kwargs`` or unreadable."""
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
            return (starts[row - 1] + col, lead + ("*, " if defaults and not star else ""),
                    defaults or star)
        prev = token
    return None


def call_end(line: str, name: str) -> tuple[int, str, bool] | None:
    """(where a new last argument goes, what comes before it, whether the call passes
    arguments by keyword already) in ``line``'s first call of ``name`` (after a dot or first
    on the line); None when that call does not close on it."""
    tokens = list(_significant(line))
    for i, token in enumerate(tokens[:-1]):
        after_dot = i == 0 or tokens[i - 1].string == "."
        if token.string == name and after_dot and tokens[i + 1].string == "(":
            break
    else:
        return None
    start = tokens[i + 1].start[1]
    prev = None
    keywords = False
    for token, depth in _bracketed(line[start:]):
        keywords = keywords or (depth == 1 and token.string in ("=", "**"))
        if depth == 0:
            if prev is None:
                return None
            lead = "" if prev.string == "(" else " " if prev.string == "," else ", "
            return start + prev.end[1], lead, keywords
        prev = token
    return None


def passes(suggestion: str, function: str, name: str) -> bool:
    """The suggestion's first line calls ``function`` and names ``name`` among that call's own
    arguments (passes it: as an argument or a keyword; not in a later call on the line, not
    as an attribute ``x.name``)."""
    line = first_line(suggestion)
    tokens = list(_significant(line))
    for i, token in enumerate(tokens[:-1]):
        if token.string != function or tokens[i + 1].string != "(":
            continue
        prev = None
        for argument, _depth in _bracketed(line[tokens[i + 1].start[1]:]):
            if argument.type == tokenize.NAME and argument.string == name \
                    and (prev is None or prev.string != "."):
                return True
            prev = argument
    return False


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
