"""Known members: after a known qualifier's dot the greedy picks keep to the names it offers.

A small code model often writes a plausible name that does not exist (``errors.`` then
``MissingBoundaryDefect`` where the module defines ``NoBoundaryInMultipartDefect``). Where
the request knows every name a qualifier offers (``GenerateRequest.members``), a pick that
would spell a name no member starts with, or end a name that is no member, gives way to the
model's best pick among the ``CANDIDATES`` most likely tokens and the tokens that spell the
start of a member's name from there (the constraint is dropped for that step when none keeps
to them): the idea of monitor-guided decoding. A key that is the head of a Python import
statement (``from pkg.mod import``) rules the names listed after it the same way, a relative
import's package (``from ..sub``) the next name of its path, and the key ``import '`` (or
with ``"``) the relative path in the string of a JavaScript or TypeScript import or
``require``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from ..member_keys import (
    FROM_IMPORT,
    IMPORT_STRING,
    absolute_module_names,
    absolute_module_typed,
    import_list_key,
    import_path_key,
    relative_module_key,
    relative_module_names,
    relative_module_typed,
)
from .import_grammar import element_cut, list_cut, path_cut
from .sampling import probability

CANDIDATES = 64
"""The most likely tokens looked at for one that keeps to the members."""

_NAME_CHAR = re.compile(r"[\w$]")

_LISTED = re.compile(r"(?:^\s*\(?|,)\s*(\*|\w*)")
"""Each name listed after an import statement's head (an ``as`` alias is not one; a ``*``
is, that no module offers: the model names what it imports, the user may type a ``*``)."""

SPELLED_CHARS = 24
"""Tokens that spell up to this many characters of a member's name are looked up."""

SPELLED_NAMES = 512
"""At most this many names (the first in sorted order that go on from what is written) are
spelled for one pick: a generated module of thousands of names costs no more."""

ENDINGS = ("(", "()", ")", ".", ",", ":", ";", " ", "[", "]", "\n")
"""Tokens looked up to end a name that is a member (the model may want to go on with it)."""


class Pieces(Protocol):
    """What the rule needs of a model (``llama.Model``)."""

    def piece(self, token: int) -> bytes: ...

    def piece_id(self, piece: bytes) -> int | None: ...


class MemberRule:
    """Which next tokens keep the names written after known qualifiers to their members.

    Args:
        members: each key of ``member_keys`` -> every name (or path) it offers. Its keys
            are the qualifiers looked for anywhere; an import's module path and list are
            looked up by their key as they are written, so a mapping may also answer keys
            it does not list (``in`` and ``[]``: a package's path, a module's import list).
        line_before: the cursor line's text before the cursor, less the healing text.
    """

    def __init__(self, members: Mapping[str, frozenset[str]], line_before: str) -> None:
        self.members = members
        self.line_before = line_before
        self._sorted: dict[str, list[str]] = {}
        keys = sorted((k for k in members if " " not in k), key=len, reverse=True)
        alternatives = "|".join(re.escape(k) for k in keys) or "(?!)"  # none: never matches
        qualifier = r"(?<![\w$.])(" + alternatives + r")"
        self._access = re.compile(qualifier + r"\.([\w$]*)")
        self._tail = re.compile(qualifier + r"(?:(\.)([\w$]*))?$")

    def line(self, generated: str) -> str:
        """The cursor line's text so far with ``generated`` after the cursor; where the cursor
        line opens an import's parenthesized list, the whole statement so far (its line
        breaks as spaces) until the list is closed."""
        text = self.line_before + generated
        head = FROM_IMPORT.match(text)
        if head is not None:
            listed = text[head.end() :]
            if listed.lstrip().startswith("(") and ")" not in listed:
                return text.replace("\n", " ")
        return text.rsplit("\n", 1)[-1]

    def allows(self, line: str, piece: str) -> bool:
        """Whether ``piece`` after ``line`` keeps every name it writes after a known
        qualifier (or in a known module's import list) to that qualifier's members (a name the
        user typed that no member starts with is left alone, as is anything in a string or a
        comment). An empty piece (the end of the text, a control token) ends the name being
        written."""
        text = line + (piece or "\0")
        head = self._import_head(text)
        if head is not None and (list_cut(text, line, head[1])
                                 or element_cut(text, line, head[1])):
            return False
        if path_cut(text, line, self.members.__contains__):
            return False
        for key, start, name, taken in self._names_written(text, line, head):
            typed = name[: max(0, len(line) - start)]
            if not self._starts(key, typed):
                continue  # already no member's start: not the model's to mend
            if start + len(name) == len(text):  # the name may go on
                if not self._starts(key, name, taken):
                    return False
            elif name not in self.members[key] or name in taken:
                return False
        return True

    def _names_written(self, text: str, line: str, head: tuple[str, int] | None
                       ) -> list[tuple[str, int, str, frozenset[str]]]:
        """(key, start, name, names it may not be) of each ruled name of ``text`` that ends
        at or after the end of ``line`` (the names a piece after ``line`` touches); an import
        list's name may not be one listed before it (``head``: the import statement ``text``
        starts, ``_import_head``)."""
        out = []
        for match in self._access.finditer(text, max(0, len(line) - self._reach(line))):
            if match.end() >= len(line) and not _in_string_or_comment(text[: match.start()]):
                out.append((match.group(1), match.start(2), match.group(2), frozenset()))
        for match in IMPORT_STRING.finditer(text):
            key = import_path_key(match.group(1))
            if (key in self.members and match.end() >= len(line)
                    and not _in_string_or_comment(text[: match.start()])):
                out.append((key, match.start(2), match.group(2), frozenset()))
        for package, start, name in relative_module_names(text):
            key = relative_module_key(package)
            if key in self.members and name and start + len(name) >= len(line):
                out.append((key, start, name, frozenset()))  # an empty one rules nothing
        for package, start, name in absolute_module_names(text):
            if name and start + len(name) >= len(line) and package in self.members:
                out.append((package, start, name, frozenset()))
        if head is not None:
            key, after = head
            taken: set[str] = set()
            for listed in _LISTED.finditer(text[after:]):
                start, name = after + listed.start(1), listed.group(1)
                if name and start + len(name) >= len(line):  # an empty slot rules nothing
                    out.append((key, start, name, frozenset(taken)))
                taken.add(name)
        return out

    def _import_head(self, line: str) -> tuple[str, int] | None:
        """The key of the import statement ``line`` starts with, and where its list starts;
        None where it starts with none whose module's names are known."""
        match = FROM_IMPORT.match(line)
        if match is None:
            return None
        key = import_list_key(match.group(1))
        return (key, match.end()) if key in self.members else None

    def _starts(self, key: str, prefix: str, taken: frozenset[str] = frozenset()) -> bool:
        """Whether a name ``key`` offers, other than those ``taken``, starts with ``prefix``
        (a dunder only where ``prefix`` starts with ``__``, as ``spellings`` has it: a lone
        ``_`` that only dunders begin with would leave no token to go on with)."""
        names = self._names(key)
        for at in range(bisect_left(names, prefix), len(names)):
            name = names[at]
            if not name.startswith(prefix):
                return False
            if name not in taken and (prefix.startswith("__") or not _dunder(name)):
                return True
        return False

    def spellings(self, line: str) -> list[str]:
        """The texts a next piece could have to go on with a member's name where ``line``
        ends in a known qualifier (its dot first), in a known module's import list, or in a
        name being written after one."""
        head = self._import_head(line)
        if head is not None:
            key, after = head
            listed = list(_LISTED.finditer(line[after:]))
            if not listed or after + listed[-1].end() != len(line):
                return []  # the line ends after an alias, a ``*`` or a ``)``
            typed = listed[-1].group(1)
            lead = " " if not typed and not line[-1].isspace() and line[-1] != "(" else ""
            taken = frozenset(m.group(1) for m in listed[:-1])
            return self._spelled(key, lead, typed, taken)
        relative = relative_module_typed(line)
        if relative is not None and relative_module_key(relative[0]) in self.members:
            return self._spelled(relative_module_key(relative[0]), "", relative[1])
        path = IMPORT_STRING.search(line)
        if path is not None and path.end() == len(line):
            quote = path.group(1)
            key = import_path_key(quote)
            if key in self.members and not _in_string_or_comment(line[: path.start()]):
                return self._spelled(key, "", path.group(2), endings=(quote, quote + ";",
                                                                       quote + ")"))
        out: set[str] = set()
        absolute = absolute_module_typed(line)
        if absolute is not None and absolute[0] in self.members:  # ``from pkg.sub.mo``
            out.update(self._spelled(absolute[0], "", absolute[1]))
        tail = self._tail.search(line)
        if tail is not None and not _in_string_or_comment(line[: tail.start()]):
            lead, typed = ("", tail.group(3)) if tail.group(2) else (".", "")
            out.update(self._spelled(tail.group(1), lead, typed))
        return sorted(out)

    def _spelled(self, key: str, lead: str, typed: str, taken: frozenset[str] = frozenset(),
                 endings: tuple[str, ...] = ENDINGS) -> list[str]:
        """``lead`` and the starts of the rest of each name of ``key`` but those ``taken``
        that begins with ``typed`` (the name's ``endings`` too where ``typed`` is one)."""
        whole = typed in self.members[key] and typed not in taken
        out = {lead} if lead else set(endings) if whole else set()
        names = self._names(key)
        start = bisect_left(names, typed)
        for name in names[start : start + SPELLED_NAMES]:
            if not name.startswith(typed):
                break
            if name not in taken and (typed.startswith("__") or not _dunder(name)):
                rest = name[len(typed) : len(typed) + SPELLED_CHARS]
                out.update(lead + rest[:i] for i in range(1, len(rest) + 1))
        return sorted(out)

    def _names(self, key: str) -> list[str]:
        """The names ``key`` offers, sorted (once per key)."""
        names = self._sorted.get(key)
        if names is None:
            names = self._sorted[key] = sorted(self.members[key])
        return names

    def _reach(self, line: str) -> int:
        """How far back from the end of ``line`` an access the next piece touches starts."""
        start = len(line)
        while start > 0 and (_NAME_CHAR.match(line[start - 1]) or line[start - 1] == "."):
            start -= 1
        return len(line) - start + 1


def _in_string_or_comment(before: str) -> bool:
    """Whether text after ``before`` (the start of a line) is inside a string or a comment, by
    counting quotes: a guess good enough to stay out of prose."""
    quotes = {'"': 0, "'": 0, "`": 0}
    for char in before.replace("\\\\", "").replace('\\"', "").replace("\\'", ""):
        if char in quotes:
            quotes[char] += 1
    if any(count % 2 for count in quotes.values()):
        return True
    return "#" in before or "//" in before


def constrained_pick(model: Pieces, logits: np.ndarray, rule: MemberRule, line: str,
                     picked: int | None = None, among: np.ndarray | None = None
                     ) -> tuple[int, float] | None:
    """The best token after ``line`` that ``rule`` allows, with the model's own probability
    of it (a low one where the model wanted another name: the answer's confidence says so);
    None when the pick made without the rule (``picked``, by default the model's own) is
    allowed or no candidate is. ``among``: the only tokens that may be picked (those that
    spell a healing text), else the likeliest and those that spell a member's name."""
    best = int(np.argmax(logits)) if picked is None else picked
    if rule.allows(line, _text(model, best)):
        return None
    if among is not None:
        looked = {int(t) for t in among}
    else:
        top = np.argpartition(logits, -CANDIDATES)[-CANDIDATES:]
        looked = {int(t) for t in top}
    allowed_set = {t for t in looked if rule.allows(line, _text(model, t))}
    if among is None:  # a spelling's token keeps to the members by its making
        spelled = (model.piece_id(text.encode("utf-8")) for text in rule.spellings(line))
        allowed_set.update(t for t in spelled if t is not None)
    allowed = np.array(sorted(allowed_set), dtype=np.int64)
    if len(allowed) == 0:
        return None
    token = int(allowed[np.argmax(logits[allowed])])
    return token, probability(logits, token)


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _text(model: Pieces, token: int) -> str:
    return model.piece(token).decode("utf-8", "replace")
