"""What one request asks of the decode loop (``generator.Generator``) and what it answers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable

from ..shared_types import RequestStats, StopReason, StopRule


@dataclass(slots=True)
class GenerateRequest:
    """One completion for the decode loop."""

    prompt: list[int]
    """The prompt's tokens (the last typed token held back when ``heal`` is set)."""
    max_tokens: int = 64
    """At most this many tokens are generated."""
    temperature: float = 0.0
    """0 decodes greedily; above it, picks are sampled."""
    seed: int = 0
    """Seeds the sampler (unused when greedy)."""
    hint: list[int] = field(default_factory=list)
    """The rest of a suggestion the user typed through (heal text first): drafted first."""
    corpus: list[int] = field(default_factory=list)
    """The last suggestion shown in this document: where n-gram lookups look first."""
    heal: str = ""
    """Text the prompt held back (the last typed token): the first picks must spell it, and
    it is cut from the front of the result."""
    stop: StopRule | None = None
    """Where the text so far ends the request, if it does (None: only EOG and max_tokens)."""
    speculative: bool = True
    """Whether drafts and the greedy memory may be used."""
    cancelled: Callable[[], bool] = lambda: False
    """Polled between steps and ubatches; True ends the request as cancelled."""
    yielding: Callable[[], bool] = lambda: False
    """True ends the request as cancelled once its prompt is read (a read under way goes on
    and stays cached); after that, as ``cancelled`` does."""
    on_text: Callable[[str], None] | None = None
    """Told the text so far after every emitted token."""
    idle: bool = False
    """Idle work (a prefetch): runs on a branch of the prefix cache (see ``prepare_branch``)."""
    document: str | None = None
    """The document the prompt is for (the prefix cache tells its older states by it)."""
    members: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Qualifier (or ``from X import``) -> every name it offers: greedy picks after
    ``qualifier.`` (or in the list after that head) keep to them (``member_rule``); empty: no
    such rule."""
    line_before: str = ""
    """The cursor line's text before the cursor, the healing text included (where the names
    ``members`` rules start)."""


@dataclass(slots=True)
class GenerateResult:
    """What the decode loop answered."""

    text: str
    """The generated text, healing text cut from its front and the stop rule's cut applied."""
    tokens: list[int]
    """The generated tokens (before the stop rule's cut)."""
    stop_reason: StopReason
    """Why generation ended."""
    stats: RequestStats
    """Counts and timings of the request."""
