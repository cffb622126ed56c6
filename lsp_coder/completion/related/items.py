"""One piece of the other files' section, as its sources hand it over."""

from __future__ import annotations

from dataclasses import dataclass


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
