"""The one interface the completion layer calls: stream a FIM completion, count tokens, describe.

Two kinds of implementation: the in-process llama.cpp engine (``backends.local``) and
the HTTP backends for shared serving engines (``backends.remote``). Prefix caching, speculation
and the greedy memory live inside the local engine; a remote engine does its own.
"""

from __future__ import annotations

from typing import Protocol

from ..prompt_parts import PromptPart
from ..shared_types import BackendResult, FimQuery, PrefillResult


class Backend(Protocol):
    """Computes completions for the completion layer (worker thread, one call at a time)."""

    kind: str
    """``[backend] kind``: "local" or the serving engine's wire format."""
    can_prefill: bool
    """Whether ``prefill`` does anything."""
    shared: bool
    """A serving engine other editors share: a start that is then superseded costs everyone
    (the scheduler debounces fully and confirms nothing in the background)."""

    def complete(self, query: FimQuery) -> BackendResult:
        """Generate for ``query``, streaming text to ``query.on_text``; honours its cancel.

        The backend picks the budget (``query.budget``, which the local engine scales to its KV
        cache), gathers the pieces from ``query.sources`` for it and fits them exactly, in
        one place of its own."""
        ...

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is for this backend's model."""
        ...

    def prefill(self, query: FimQuery, part: PromptPart = "request",
                in_view: bool = False) -> PrefillResult | None:
        """Evaluate ``part`` of the prompt of ``query`` into the cache without generating,
        stopping soon after ``query.cancelled`` turns true; None when the backend cannot.

        ``in_view``: the document the user is in now (just opened, or the cursor rests
        there); a backend that keeps idle work from pushing cached documents out may let
        this one take the least recently used document's room.
        """
        ...

    def forget(self, uri: str) -> None:
        """A document closed: drop what is kept for it (any thread)."""
        ...

    def describe(self) -> dict:
        """What this backend is and how it is doing, in full (for ``doctor``)."""
        ...

    def status(self) -> dict:
        """What ``lspCoder.stats`` shows under ``backend`` (any thread)."""
        ...

    def memory(self) -> dict:
        """The cache memory it holds, for ``lspCoder.stats`` (any thread; {} where the engine
        is elsewhere)."""
        ...

    def ubatches_done(self) -> int:
        """A clock of local engine work: ubatches evaluated so far (any thread; 0 where the
        engine is elsewhere)."""
        ...

    def close(self) -> None:
        ...
