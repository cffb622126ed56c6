"""What the completion service is asked and what it answers (no pygls here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..shared_types import RequestStats


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """A completion at ``offset`` (a str index) of ``text``."""

    uri: str
    """The document."""
    text: str
    """The document's whole text."""
    offset: int
    """The cursor, a str index into ``text``."""
    path: str = ""
    """The document's file path (named in other files' context); the URI when empty."""
    language_id: str = ""
    """The editor's language id."""
    budget_ms: float | None = None
    """How long the caller waits: when it runs out the complete lines so far (or the partial
    first line) are answered and generation goes on into the suggestion cache."""
    alternatives: int = 0
    """Other suggestions to sample after the first (a request the user invoked)."""
    invoked: bool = False
    """The user asked (a key, not typing): shown however unsure the model is."""


@dataclass(slots=True)
class Suggestion:
    """What to show, and what it took."""

    text: str
    """The suggestion (empty: nothing to show)."""
    cached: bool = False
    """Answered from the suggestion cache."""
    stats: RequestStats | None = None
    """What the backend did for it (None when it did nothing)."""
    latency_ms: float = 0.0
    """From the start of the work to the answer."""
    stop_reason: str = ""
    """Why it ended (a ``StopReason`` value; empty for a cache answer)."""
    extra: dict = field(default_factory=dict)
    """Flags for the scheduler: ``answered_early`` (a time-boxed answer was sent);
    ``alternatives_evaluated_tokens`` (prompt tokens the alternatives evaluated)."""
    alternatives: list[str] = field(default_factory=list)
    """Other suggestions for the same cursor, distinct from ``text`` and each other."""
