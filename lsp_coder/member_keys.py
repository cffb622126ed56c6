"""The keys of known members (``PromptParts.members``, ``GenerateRequest.members``), spelled
in one place: completion finds what each key offers, the engine's member rule keeps the
names written after it to them.

- A qualifier (``errors``, ``pkg.mod``): the names it offers after its dot.
- The head of a Python import statement (``from pkg.mod import``, ``import_list_key``): the
  names its list may hold.
- ``import '`` or ``import "`` (the quote typed, ``import_path_key``): every relative path the
  string of a JavaScript or TypeScript import or ``require`` may hold.
"""

from __future__ import annotations

import re

FROM_IMPORT = re.compile(r"\s*from\s+((\.*)([\w.]*))\s+import(?=[\s(]|$)")
"""The head of a ``from X import`` statement at a line's start: X as written, its leading
dots, the module after them."""

IMPORT_STRING = re.compile(r"(?:\bfrom|\bimport|\brequire)\s*\(?\s*(['\"])([^'\"\n]*)")
"""The string of a JavaScript or TypeScript import or ``require``: its quote and its text."""


def import_list_key(written: str) -> str:
    """The key of the names a ``from written import`` list may hold."""
    return f"from {written} import"


def import_path_key(quote: str) -> str:
    """The key of the paths an import string opened by ``quote`` may hold."""
    return f"import {quote}"
