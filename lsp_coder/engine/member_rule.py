"""Known members: after a known qualifier's dot the greedy picks keep to the names it offers.

A small code model often writes a plausible name that does not exist (``errors.`` then
``MissingBoundaryDefect`` where the module defines ``NoBoundaryInMultipartDefect``). Where
the request knows every name a qualifier offers (``GenerateRequest.members``), a pick that
would spell a name no member starts with, or end a name that is no member, gives way to the
model's best pick among the ``CANDIDATES`` most likely tokens and the tokens that spell the
start of a member's name from there (the constraint is dropped for that step when none keeps
to them): the idea of monitor-guided decoding.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from .sampling import probability

CANDIDATES = 64
"""The most likely tokens looked at for one that keeps to the members."""

_NAME_CHAR = re.compile(r"[\w$]")

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
        members: qualifier (``errors``, ``pkg.mod``) -> every name it offers.
        line_before: the cursor line's text before the cursor, less the healing text.
    """

    def __init__(self, members: Mapping[str, frozenset[str]], line_before: str) -> None:
        self.members = members
        self.line_before = line_before
        self._sorted = {key: sorted(names) for key, names in members.items()}
        keys = sorted(members, key=len, reverse=True)
        qualifier = r"(?<![\w$.])(" + "|".join(re.escape(k) for k in keys) + r")"
        self._access = re.compile(qualifier + r"\.([\w$]*)")
        self._tail = re.compile(qualifier + r"(?:(\.)([\w$]*))?$")

    def line(self, generated: str) -> str:
        """The cursor line's text so far with ``generated`` after the cursor."""
        return (self.line_before + generated).rsplit("\n", 1)[-1]

    def allows(self, line: str, piece: str) -> bool:
        """Whether ``piece`` after ``line`` keeps every name it writes after a known
        qualifier to that qualifier's members (a name the user typed that no member starts
        with is left alone, as is anything in a string or a comment). An empty piece (the
        end of the text, a control token) ends the name being written."""
        text = line + (piece or "\0")
        for match in self._access.finditer(text, max(0, len(line) - self._reach(line))):
            if match.end() < len(line):
                continue  # written before this piece, and ended there
            if _in_string_or_comment(text[: match.start()]):
                return True
            key, name = match.group(1), match.group(2)
            typed = name[: max(0, len(line) - match.start(2))]
            if not self._starts(key, typed):
                continue  # already no member's start: not the model's to mend
            if match.end() == len(text):  # the name may go on
                if not self._starts(key, name):
                    return False
            elif name not in self.members[key]:
                return False
        return True

    def _starts(self, key: str, prefix: str) -> bool:
        """Whether a name ``key`` offers starts with ``prefix``."""
        names = self._sorted[key]
        at = bisect_left(names, prefix)
        return at < len(names) and names[at].startswith(prefix)

    def spellings(self, line: str) -> list[str]:
        """The texts a next piece could have to go on with a member's name where ``line``
        ends in a known qualifier (its dot first) or in a name being written after one."""
        tail = self._tail.search(line)
        if tail is None or _in_string_or_comment(line[: tail.start()]):
            return []
        lead, typed = ("", tail.group(3)) if tail.group(2) else (".", "")
        key = tail.group(1)
        out = {"."} if lead else set(ENDINGS) if typed in self.members[key] else set()
        names = self._sorted[key]
        start = bisect_left(names, typed)
        for name in names[start : start + SPELLED_NAMES]:
            if not name.startswith(typed):
                break
            if typed.startswith("__") or not _dunder(name):
                rest = name[len(typed) : len(typed) + SPELLED_CHARS]
                out.update(lead + rest[:i] for i in range(1, len(rest) + 1))
        return sorted(out)

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
