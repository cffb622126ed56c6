"""The one type every postprocess filter shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class FilterContext:
    """What a filter may look at besides the suggestion text.

    Attributes:
        prefix: the document text before the cursor.
        suffix: the document text after the cursor.
        multiline: whether the suggestion may span several lines.
        mend_import_path: turns an answer's first line into one whose relative import path
            names a file, or None where it has nothing to mend (``mend_import_path``); None:
            the cursor is in no import's path.
    """

    prefix: str
    suffix: str
    multiline: bool = True
    mend_import_path: Callable[[str], str | None] | None = None

    @property
    def cursor_line(self) -> str:
        """The cursor's line before the cursor."""
        return self.prefix[self.prefix.rfind("\n") + 1 :]

    @property
    def rest_of_line(self) -> str:
        """The cursor's line after the cursor."""
        return self.suffix.split("\n", 1)[0]


Filter = Callable[[str, FilterContext], str]
"""A filter maps a suggestion text to a new text; an empty text means discard."""
