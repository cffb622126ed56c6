"""The known members one request carries (``PromptParts.members``): the names found before
it, and the keys of a Python import looked up the first time the member rule asks for one,
as the model writes the statement (its path to any depth, then its list)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

LOOKUPS_MAX = 16
"""At most this many keys are looked up for one request (each may read a file)."""


class KnownKeys(Mapping[str, frozenset[str]]):
    """``found`` (the qualifiers the rule looks for anywhere, listed), and every key
    ``look_up`` knows (answered by ``in`` and ``[]``, not listed). Used by one request on the
    worker thread.

    Args:
        found: each key found up front -> the names it offers.
        look_up: a key not found -> the names it offers, or None where they are unknown.
    """

    def __init__(self, found: Mapping[str, frozenset[str]],
                 look_up: Callable[[str], frozenset[str] | None]) -> None:
        self._found = dict(found)
        self._look_up = look_up
        self._looked: dict[str, frozenset[str] | None] = {}

    def __getitem__(self, key: str) -> frozenset[str]:
        names = self._found.get(key)
        if names is None:
            if key not in self._looked:
                over = len(self._looked) >= LOOKUPS_MAX
                self._looked[key] = None if over else self._look_up(key)
            names = self._looked[key]
        if names is None:
            raise KeyError(key)
        return names

    def __iter__(self) -> Iterator[str]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)

    def __bool__(self) -> bool:
        return True  # a rule is worth making even where nothing was found up front
