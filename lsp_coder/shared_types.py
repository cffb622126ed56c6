"""The records every layer hands the next: what to complete, why it stopped, what it cost.

This is the ground floor: it imports nothing of lsp_coder but the prompt's pieces
(``prompt_parts``), so the completion layer, every backend (the in-process engine and the HTTP
ones) and the engine itself can share these types without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from .prompt_parts import PromptBudget, PromptParts, PromptSources

StopRule = Callable[[str], int | None]
"""Given the text generated so far, the length to cut it to and stop, or None to go on."""


class StopReason(StrEnum):
    """Why a suggestion ended. A ``str``: records and stats carry the plain value."""

    EOG = "eog"
    """The model ended its answer (an end-of-generation token)."""
    MAX_TOKENS = "max_tokens"
    """``max_tokens`` were generated."""
    STOP_RULE = "stop"
    """A stop rule (first line, line limit) cut the text."""
    CANCELLED = "cancelled"
    """The request was cancelled (a newer one, ``$/cancelRequest``, shutdown)."""
    BACKEND_ERROR = "backend_error"
    """The serving engine failed this request."""
    BACKEND_DOWN = "backend_down"
    """The serving engine is in an outage's backoff: nothing was asked."""
    NO_MODEL = "no_model"
    """No model is loaded and no serving engine configured."""
    SUPERSEDED = "superseded"
    """A newer request for the same document replaced this one before it ran."""
    TIME_BOX = "time_box"
    """The budget ran out: the complete lines so far were answered, the rest goes on."""
    ERROR = "error"
    """The work raised; the request was answered empty."""
    EXCLUDED = "excluded"
    """The document is excluded from the model (``[context] exclude``, an ignore file, a file
    that holds secrets): nothing was asked."""


@dataclass(frozen=True, slots=True)
class FimQuery:
    """What to complete, as text pieces in document order (each within its token budget), and
    how: the budgets, the sampling, the stop rule and the callbacks of one request."""

    uri: str
    """The document (prefix caches tell a document's older states by it)."""
    sources: PromptSources
    """Where the prompt's pieces come from (``PromptParts`` when they are gathered already)."""
    budget: PromptBudget = PromptBudget()
    """The token budgets the pieces are gathered for and fitted to."""
    max_tokens: int = 64
    """The most tokens to generate."""
    temperature: float = 0.0
    """0 decodes greedily."""
    seed: int = 0
    """The sampling seed (temperature above 0)."""
    stop: StopRule | None = None
    """Where to cut the text and stop (the first line, a line limit)."""
    budget_ms: float | None = None
    """How long the caller waits before the complete lines so far are answered."""
    cancelled: Callable[[], bool] = lambda: False
    """Polled between steps; True stops the work as cancelled."""
    on_text: Callable[[str], None] | None = None
    """Told the text so far as it grows."""
    hint: str = ""
    """The not-yet-typed rest of a shown suggestion (the local engine drafts it for free)."""
    corpus: str = ""
    """The document's latest suggestion (n-gram drafts for the local engine)."""
    idle: bool = False
    """Idle work (a prefetch): the local engine runs it on a branch of its cache."""
    stop_between_chunks: Callable[[], bool] = lambda: False
    """Once true, stop after the running chunk of work, which stays cached (an idle
    prefill's chunk; a request's read of its prompt, and past it at once), where
    ``cancelled`` aborts it."""

    @property
    def parts(self) -> PromptParts:
        """The prompt's pieces for ``budget`` (gathered once per budget by the source)."""
        return self.sources.gather(self.budget)


@dataclass(slots=True)
class RequestStats:
    """What the engine did for one request (summed into ``lspCoder.stats``)."""

    prompt_tokens: int = 0
    """Tokens in the prompt."""
    reused_tokens: int = 0
    """Prompt tokens served from a cache."""
    shifted_tokens: int = 0
    """Reused tokens that were moved to another position (RoPE shift)."""
    evaluated_tokens: int = 0
    """Prompt tokens evaluated for this request."""
    generated_tokens: int = 0
    """Tokens generated."""
    prefill_ms: float = 0.0
    """Time spent evaluating the prompt."""
    decode_ms: float = 0.0
    """Time spent generating."""
    decode_steps: int = 0
    """Target-model decode calls while generating."""
    draft_proposed: dict[str, int] = field(default_factory=dict)
    """Draft tokens proposed, by drafter."""
    draft_accepted: dict[str, int] = field(default_factory=dict)
    """Draft tokens accepted, by drafter."""
    near_ties: int = 0
    """Greedy picks whose logit gap was small enough for batch numerics to flip."""
    known_tokens: int = 0
    """Generated tokens taken from the greedy memory (verified without a decode)."""
    short_prompt: bool = False
    """The prompt was the short one for a cold cache (``idle.cold_prompt_tokens``), or held
    the document's last section (``held_section``): idle work reads the full one next."""
    held_section: bool = False
    """The prompt held the other files' section the document's last request read, as the
    cache lacked the prompt with a new one (``PromptParts.held_extra``)."""
    second_pass: bool = False
    """The answer is a second one, from a section that added what the first draft named
    (``context.second_pass``); the figures are both passes'."""
    token_probs: list[float | None] = field(default_factory=list)
    """The model's probability of each generated token as it was picked (a token recalled
    from the greedy memory: as it was when first picked; None: not known; empty where the
    backend does not say)."""
    first_line_tokens: int = 0
    """How many of the generated tokens make the answer's first line with text (with the
    line breaks before it and the one after it)."""


@dataclass(slots=True)
class BackendResult:
    """One backend's answer to a ``FimQuery``."""

    text: str
    """The generated text, cut by the stop rule."""
    stop_reason: StopReason
    """Why it ended."""
    stats: RequestStats | None = None
    """What it cost (None where the backend did no work)."""
    server_cached_tokens: int | None = None
    """Prompt tokens the engine reports it served from its own cache (None: it does not say)."""


@dataclass(frozen=True, slots=True)
class PrefillResult:
    """What one idle prefill did."""

    outcome: str
    """"done", "cached" (nothing to evaluate), "cancelled" (stopped by a request; the
    ``evaluated_tokens`` were kept), or "no_room" (no spare sequence, or the KV budget is full
    of a request's blocks)."""
    prompt_tokens: int
    """Tokens in the prompt."""
    reused_tokens: int = 0
    """Prompt tokens already cached."""
    evaluated_tokens: int = 0
    """Prompt tokens evaluated."""
    prefill_ms: float = 0.0
    """Time spent evaluating."""
    short_prompt: bool = False
    """The prompt was the short one for a cold cache (``idle.cold_prompt_tokens``)."""
