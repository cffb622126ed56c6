"""The one interface the completion layer calls: stream a FIM completion, count tokens, describe.

Two kinds of implementation: the in-process llama.cpp engine (``completion.local_backend``) and
the HTTP backends for shared serving engines (``backends.remote``). Prefix caching, speculation
and the greedy memory live inside the local engine; a remote engine does its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..engine.generator import RequestStats
from ..engine.prefill import PrefillResult

StopRule = Callable[[str], int | None]
"""Given the text generated so far, the length to cut it to and stop, or None to go on."""

PromptPart = Literal["request", "shared", "full"]
"""Which prompt an idle prefill holds: the one a request for the query would read now; only
the part before the text below the cursor (a file's window, shared by every cursor in it);
the full prompt even where a request would now read a shorter one (the local engine's short
prompt for a cold cache)."""


@dataclass(slots=True)
class FimQuery:
    """What to complete, as text pieces in document order (each within its token budget).

    ``above`` ends where ``recent`` (lines just above the cursor line, sent after the middle
    token with the typed text) starts, ``line_prefix`` is the cursor line before the cursor,
    ``suffix`` the rest of the document window after it; ``extra`` holds (path, text) chunks of
    other files.
    """

    uri: str
    above: str
    line_prefix: str
    suffix: str
    extra: tuple[tuple[str, str], ...] = ()
    recent: str = ""
    repo: str = ""
    """The workspace folder's name, for the model's repository format (with ``extra``)."""
    path: str = ""
    """The open file's path, written before it when ``extra`` is not empty."""
    prefix_tokens: int = 1024
    suffix_tokens: int = 256
    extra_tokens: int = 256
    """The token budgets ``above`` (with ``line_prefix``), ``suffix`` and ``extra`` were cut to."""
    max_tokens: int = 64
    temperature: float = 0.0
    seed: int = 0
    stop: StopRule | None = None
    budget_ms: float | None = None
    cancelled: Callable[[], bool] = lambda: False
    on_text: Callable[[str], None] | None = None
    hint: str = ""
    """The not-yet-typed rest of a shown suggestion (the local engine drafts it for free)."""
    corpus: str = ""
    """The document's latest suggestion (n-gram drafts for the local engine)."""
    idle: bool = False
    """Idle work (a prefetch): the local engine runs it on a branch of its cache."""
    stop_between_chunks: Callable[[], bool] = lambda: False
    """Idle prefill: once true, stop after the running chunk (which stays cached), where
    ``cancelled`` aborts it."""


@dataclass(slots=True)
class BackendResult:
    text: str
    stop_reason: str
    stats: RequestStats | None = None
    server_cached_tokens: int | None = None
    """Prompt tokens the engine reports it served from its own cache (None: it does not say)."""
    extra: dict = field(default_factory=dict)


class Backend(Protocol):
    """Computes completions for the completion layer (worker thread, one call at a time)."""

    kind: str
    can_prefill: bool
    """Whether ``prefill`` does anything."""

    def budgets(self, prefix: int, suffix: int, extra: int, max_tokens: int) -> tuple[int, ...]:
        """The (prefix, suffix, extra) token budgets to cut the prompt to, from the
        configured ones (the local engine scales them to its KV cache)."""
        ...

    def complete(self, query: FimQuery) -> BackendResult:
        """Generate for ``query``, streaming text to ``query.on_text``; honours its cancel."""
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

    def describe(self) -> dict:
        """What this backend is and how it is doing (for ``doctor`` and ``lspCoder.stats``)."""
        ...

    def close(self) -> None:
        ...
