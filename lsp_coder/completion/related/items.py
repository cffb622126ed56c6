"""One piece of the other files' section, as its sources hand it over, and fitting pieces to
the section's budget."""

from __future__ import annotations

from dataclasses import dataclass

from .text import trim_lines

MIN_TRIMMED_CHARS = 80
"""A trimmed item shorter than this is left out (a signature cut to nothing says little)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One piece of the section: a definition or a window of a document."""

    key: tuple
    """What it is: ("def", file, name) or ("chunk", uri, first line)."""
    path: str
    """The path shown for it."""
    text: str
    """Its code."""
    focus: int
    """The line kept first when it is trimmed."""

    @property
    def outline(self) -> bool:
        """A module's outline (``python_defs``), not one definition."""
        return self.key[0] == "def" and not self.key[2]


def fit_items(items: list[Item], budget: int) -> list[Item]:
    """``items`` in order within ``budget`` characters; one that does not fit whole is trimmed
    to whole lines (nearest its focus first) into what is left, never dropped whole while a
    useful part fits."""
    out: list[Item] = []
    used = 0
    headers: set[str] = set()
    for item in items:
        header = 0 if item.path in headers else len(item.path) + 2
        left = budget - used - header
        if left <= 0:
            break
        text = item.text if len(item.text) <= left else trim_lines(item.text, left, item.focus)
        if len(text) < min(len(item.text), MIN_TRIMMED_CHARS):
            continue
        headers.add(item.path)
        used += header + len(text) + 1
        out.append(Item(item.key, item.path, text, item.focus))
    return out


def kept_stable(previous: list[Item] | None, wanted: list[Item]) -> list[Item]:
    """The items to show now: ``previous`` unchanged when it already holds every wanted item
    (a changed section re-reads the whole prompt), else the previous items still wanted in
    their order, then the new ones."""
    if previous is None:
        return wanted
    before = {(i.key, i.text) for i in previous}
    if all((i.key, i.text) in before for i in wanted):
        return previous
    now = {(i.key, i.text) for i in wanted}
    return ([i for i in previous if (i.key, i.text) in now]
            + [i for i in wanted if (i.key, i.text) not in before])
