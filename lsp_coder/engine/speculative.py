"""Drafters: cheap guesses of the next tokens, verified by the target in one batch.

Cheapest first: the remainder of the previous suggestion, n-gram lookup in the prompt, and a
small draft model with the same vocabulary. Each keeps its own record of what it proposed, what
was accepted and what it cost, adapts how many tokens it proposes, and is switched off for a while
when it stops paying for itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .llama import Context, Model
from .prefix_cache.manager import PrefixCache, common_prefix
from .sampling import softmax


@dataclass(slots=True)
class Draft:
    tokens: list[int]
    probs: list[np.ndarray] | None = None
    cost_ms: float = 0.0


class Drafter(Protocol):
    name: str

    def begin(self, prompt: list[int], hint: list[int]) -> None: ...

    def propose(self, history: list[int], n_out: int, k: int) -> Draft: ...

    def accepted(self, history: list[int]) -> None: ...


@dataclass(slots=True)
class DrafterRecord:
    """Acceptance and cost bookkeeping that decides k and whether a drafter runs at all."""

    max_k: int
    proposed: int = 0
    accepted: int = 0
    cost_ms: float = 0.0
    k: int = 4
    acceptance: float = 0.7
    benefit_ms: float = 0.0
    off_until: float = 0.0
    history: list[float] = field(default_factory=list)

    def enabled(self, now: float) -> bool:
        return now >= self.off_until

    def record(self, proposed: int, accepted: int, draft_ms: float, verify_ms: float,
               token_ms: float, now: float) -> None:
        """Update counts, k and the pay-off estimate after one verification.

        The benefit of a try is the decode time it saved (accepted tokens at ``token_ms`` each)
        minus what it cost beyond a plain one-token step (drafting plus the bigger batch).
        """
        self.proposed += proposed
        self.accepted += accepted
        self.cost_ms += draft_ms
        if proposed:
            rate = accepted / proposed
            self.acceptance = 0.7 * self.acceptance + 0.3 * rate
        if accepted == proposed:
            self.k = min(self.max_k, self.k + 2)
        else:
            self.k = max(1, min(self.max_k, accepted + 1))
        saved = accepted * token_ms - draft_ms - max(0.0, verify_ms - token_ms)
        self.history.append(saved)
        del self.history[:-8]
        self.benefit_ms = sum(self.history) / len(self.history)
        if len(self.history) >= 4 and self.benefit_ms < 0:
            self.off_until = now + 20.0
            self.history.clear()
            self.k = max(1, self.k // 2)


class PreviousSuggestion:
    """Proposes the rest of the suggestion the user is typing through."""

    name = "previous"

    def __init__(self) -> None:
        self._hint: list[int] = []
        self._n_prompt = 0

    def begin(self, prompt: list[int], hint: list[int]) -> None:
        self._hint = list(hint)
        self._n_prompt = len(prompt)

    def propose(self, history: list[int], n_out: int, k: int) -> Draft:
        out = history[self._n_prompt :]
        if not self._hint or out != self._hint[: len(out)]:
            return Draft([])
        return Draft(self._hint[len(out) : len(out) + k])

    def accepted(self, history: list[int]) -> None:
        pass


class NGramLookup:
    """Prompt-lookup decoding: continue the latest earlier occurrence of the last n tokens."""

    name = "ngram"

    def __init__(self, n_max: int = 4, n_min: int = 2) -> None:
        self.n_max = n_max
        self.n_min = n_min
        self._index: dict[tuple[int, ...], int] = {}
        self._indexed = 0

    def begin(self, prompt: list[int], hint: list[int]) -> None:
        self._index = {}
        self._indexed = 0

    def _update(self, history: list[int]) -> None:
        # Index every n-gram that ends before the last token, mapping to its end position.
        for end in range(max(self._indexed, self.n_min), len(history)):
            for n in range(self.n_min, self.n_max + 1):
                if end - n < 0:
                    break
                self._index[tuple(history[end - n : end])] = end
        self._indexed = max(self._indexed, len(history))

    def propose(self, history: list[int], n_out: int, k: int) -> Draft:
        self._update(history)
        for n in range(self.n_max, self.n_min - 1, -1):
            if len(history) < n:
                continue
            end = self._index.get(tuple(history[-n:]))
            if end is not None and end < len(history):
                return Draft(history[end : end + k])
        return Draft([])

    def accepted(self, history: list[int]) -> None:
        pass


class DraftModel:
    """A small model with the target's vocabulary drafting greedily, with a confidence cutoff."""

    name = "draft_model"

    def __init__(self, model: Model, ctx: Context, cache: PrefixCache, p_min: float) -> None:
        self.model = model
        self.ctx = ctx
        self.cache = cache
        self.p_min = p_min
        self._seq: int | None = None

    def begin(self, prompt: list[int], hint: list[int]) -> None:
        self._seq = None

    def propose(self, history: list[int], n_out: int, k: int) -> Draft:
        start = time.perf_counter()
        if self._seq is None:
            prepared = self.cache.prepare(history)
            self._seq = prepared.seq_id
            held = prepared.held
        else:
            held = common_prefix(self.cache.tokens(self._seq), history)
            held = min(held, len(history) - 1)
            self.cache.truncate(self._seq, held)
        self.cache.extend(self._seq, history[held:], n_logits=1)
        tokens: list[int] = []
        probs: list[np.ndarray] = []
        while len(tokens) < k:
            p = softmax(self.ctx.logits(0), 1.0)
            tok = int(np.argmax(p))
            if p[tok] < self.p_min or self.model.is_eog(tok):
                break
            tokens.append(tok)
            probs.append(p)
            if len(tokens) < k:
                self.cache.extend(self._seq, [tok], n_logits=1)
        return Draft(tokens, probs, (time.perf_counter() - start) * 1000)

    def accepted(self, history: list[int]) -> None:
        if self._seq is not None:
            held = common_prefix(self.cache.tokens(self._seq), history)
            self.cache.truncate(self._seq, held)

    def abort(self) -> None:
        self.ctx.abort()

    def clear_abort(self) -> None:
        self.ctx.clear_abort()


def vocab_mismatch(target: Model, draft: Model) -> str | None:
    """Why ``draft`` cannot draft for ``target`` (llama.cpp's rule), or None if it can."""
    if target.vocab_type != draft.vocab_type:
        return f"vocab types differ ({target.vocab_type} vs {draft.vocab_type})"
    if target.add_bos != draft.add_bos or target.bos != draft.bos:
        return "BOS tokens differ"
    if target.eos != draft.eos:
        return "EOS tokens differ"
    if abs(target.n_vocab - draft.n_vocab) > 128:
        return f"vocab sizes differ by more than 128 ({target.n_vocab} vs {draft.n_vocab})"
    for token in range(5, min(target.n_vocab, draft.n_vocab)):
        if target.token_text(token) != draft.token_text(token):
            return f"token {token} differs ({target.token_text(token)!r} vs {draft.token_text(token)!r})"
    return None
