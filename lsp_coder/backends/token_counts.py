"""Token counts for budgets when the model runs elsewhere.

Three ways, chosen by ``backend.token_counts``: the engine's tokenize endpoint (exact, one
request per distinct text), a vocabulary-only load of a local GGUF (exact, no request, needs the
file), or an estimate from the text's length. Counts are remembered per text, so the lines above
the cursor, which stay the same while the user types on one line, are counted once.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from cachetools import LRUCache

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3.0
"""A conservative estimate for code (real tokenizers average 3.5-4.5 characters a token)."""


class TokenCounter:
    """Counts tokens with one exact method, falling back to the estimate when it fails."""

    def __init__(self, method: str, exact: Callable[[str], int] | None) -> None:
        self.method = method if exact is not None else "estimate"
        self._exact = exact
        self._known: LRUCache = LRUCache(maxsize=512)
        self.calls = 0
        self.misses = 0
        self.failures = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        if not text:
            return 0
        if self._exact is None:
            return estimate(text)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        known = self._known.get(key)
        if known is not None:
            return known
        self.misses += 1
        try:
            count = self._exact(text)
        except Exception:  # an engine hiccup must not stop completions: estimate this once
            self.failures += 1
            return estimate(text)
        self._known[key] = count
        return count

    def describe(self) -> dict:
        return {"method": self.method, "calls": self.calls, "exact_lookups": self.misses,
                "failures": self.failures}


def estimate(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def vocab_counter(model_path: str) -> Callable[[str], int]:
    """Exact counts from a vocabulary-only load of a local GGUF (no weights are read)."""
    from .local_vocab import local_vocab

    return local_vocab(model_path).count
