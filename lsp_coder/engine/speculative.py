"""Drafters: cheap guesses of the next tokens, verified by the target in one batch.

Cheapest first: the remainder of the previous suggestion, n-gram lookup in the prompt, and a
small draft model with the same vocabulary. How many tokens each may draft, if any, is decided
in ``costs`` from its record and the measured cost of verification batches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .llama import Model
from .llama_context import Context
from .prefix_cache.manager import PrefixCache
from .prefix_cache.shifting import common_prefix
from .sampling import softmax


@dataclass(slots=True)
class Draft:
    """Proposed tokens, each the drafter's deterministic guess (so a one-hot proposal)."""

    tokens: list[int]
    cost_ms: float = 0.0
    """Time spent drafting them (not counting reading the context first)."""


DEFAULT_MAX_DRAFT = 8
"""Tokens a guessing drafter may propose at once (``speculative.max_draft``)."""

REST_OF_SUGGESTION_MAX_DRAFT = 16
"""The rest of a suggestion is drafted up to this many at a time: it is usually right whole."""


class Drafter(Protocol):
    name: str
    max_k: int
    """The most tokens one draft may hold."""
    prior: tuple[float, float]
    """Acceptance prior (accepted, rejected) before anything was measured."""
    token_ms: float
    """Time to draft one token (0 for the free drafters)."""
    prefill_token_ms: float
    """Time to read one token of context before drafting (0 for the free drafters)."""

    def begin(self, prompt: list[int], hint: list[int], corpus: list[int]) -> None:
        """A new request: its prompt, the rest of a suggestion typed through (``hint``) and
        the last suggestion shown in this document (``corpus``, for lookups)."""
        ...

    def catchup(self, history: list[int]) -> int:
        """Tokens the drafter must evaluate before it can draft after ``history``."""
        ...

    def propose(self, history: list[int], n_out: int, k: int) -> Draft: ...

    def accepted(self, history: list[int]) -> None: ...


class PreviousSuggestion:
    """Proposes the rest of the suggestion the user is typing through.

    When the target spells the same text in other tokens, the draft goes on from where that
    text stands in the suggestion, re-tokenized.
    """

    name = "previous"
    prior = (9.0, 1.0)
    max_k = REST_OF_SUGGESTION_MAX_DRAFT
    token_ms = prefill_token_ms = 0.0

    def __init__(self, model: Model) -> None:
        self.model = model
        self._hint: list[int] = []
        self._hint_bytes = b""
        self._n_prompt = 0

    def begin(self, prompt: list[int], hint: list[int], corpus: list[int]) -> None:
        self._hint = list(hint)
        self._hint_bytes = b"".join(self.model.piece(t) for t in hint)
        self._n_prompt = len(prompt)

    def catchup(self, history: list[int]) -> int:
        return 0

    def propose(self, history: list[int], n_out: int, k: int) -> Draft:
        out = history[self._n_prompt :]
        if not self._hint:
            return Draft([])
        if out == self._hint[: len(out)]:
            return Draft(self._hint[len(out) : len(out) + k])
        said = b"".join(self.model.piece(t) for t in out)
        if len(said) >= len(self._hint_bytes) or not self._hint_bytes.startswith(said):
            return Draft([])
        try:
            rest = self._hint_bytes[len(said) :].decode("utf-8")
        except UnicodeDecodeError:  # the text so far ends inside a character
            return Draft([])
        return Draft(self.model.tokenize(rest)[:k])

    def accepted(self, history: list[int]) -> None:
        pass


class NGramLookup:
    """Prompt-lookup decoding: continue the latest earlier occurrence of the last n tokens.

    It looks in the last suggestion shown in the document first (the model's own recent
    words for nearly this context), then in the prompt and what was generated so far.
    """

    name = "ngram"
    prior = (1.0, 1.0)
    token_ms = prefill_token_ms = 0.0

    def __init__(self, n_max: int = 4, n_min: int = 2,
                 max_k: int = DEFAULT_MAX_DRAFT) -> None:
        self.max_k = max_k
        self.n_max = n_max
        self.n_min = n_min
        self._index: dict[tuple[int, ...], int] = {}
        self._indexed = 0
        self._corpus: list[int] = []
        self._corpus_index: dict[tuple[int, ...], int] = {}

    def begin(self, prompt: list[int], hint: list[int], corpus: list[int]) -> None:
        self._index = {}
        self._indexed = 0
        self._corpus = list(corpus)
        self._corpus_index = {}
        self._add_ngrams(self._corpus_index, self._corpus, self.n_min)

    def catchup(self, history: list[int]) -> int:
        return 0

    def _add_ngrams(self, index: dict[tuple[int, ...], int], tokens: list[int],
                    start: int) -> None:
        """Map every n-gram of ``tokens`` ending at or after ``start`` (and before the last
        token) to its end position; later occurrences win."""
        for end in range(max(start, self.n_min), len(tokens)):
            for n in range(self.n_min, self.n_max + 1):
                if end - n < 0:
                    break
                index[tuple(tokens[end - n : end])] = end

    def propose(self, history: list[int], n_out: int, k: int) -> Draft:
        self._add_ngrams(self._index, history, self._indexed)
        self._indexed = max(self._indexed, len(history))
        for n in range(self.n_max, self.n_min - 1, -1):
            if len(history) < n:
                continue
            key = tuple(history[-n:])
            for source, index in ((self._corpus, self._corpus_index), (history, self._index)):
                end = index.get(key)
                if end is not None and end < len(source):
                    return Draft(source[end : end + k])
        return Draft([])

    def accepted(self, history: list[int]) -> None:
        pass


class DraftModel:
    """A small model with the target's vocabulary drafting greedily, with a confidence cutoff.

    Its draft is its argmax even when the target samples, so the target's rejection rule treats
    it as a one-hot proposal (the sampled output keeps the target's distribution).
    """

    name = "draft_model"
    prior = (3.0, 1.0)

    def __init__(self, model: Model, ctx: Context, cache: PrefixCache, p_min: float,
                 token_ms: float = 0.0, prefill_token_ms: float = 0.0,
                 max_k: int = DEFAULT_MAX_DRAFT) -> None:
        self.max_k = max_k
        self.model = model
        self.ctx = ctx
        self.cache = cache
        self.p_min = p_min
        self.token_ms = token_ms
        self.prefill_token_ms = prefill_token_ms
        self._seq: int | None = None
        # NOTE: a draft may have fewer tokens than the target (TinyLlama's 32000 against
        # CodeLlama's 32016, whose infill tokens come last): llama.cpp refuses an id past the
        # vocabulary, so the draft reads a line break in its place, one for one.
        self._stand_in = model.tokenize("\n")[-1]

    def _readable(self, history: list[int]) -> list[int]:
        """``history`` with each id the draft does not have replaced by its stand-in."""
        n_vocab = self.model.n_vocab
        if not history or max(history) < n_vocab:
            return history
        return [t if t < n_vocab else self._stand_in for t in history]

    def begin(self, prompt: list[int], hint: list[int], corpus: list[int]) -> None:
        self._seq = None

    def catchup(self, history: list[int]) -> int:
        history = self._readable(history)
        if self._seq is not None:
            return len(history) - common_prefix(self.cache.tokens(self._seq), history)
        return len(history) - self.cache.lookup(history)[1]

    def propose(self, history: list[int], n_out: int, k: int) -> Draft:
        """Greedy draft tokens; ``cost_ms`` counts the drafting, not the catch-up read."""
        history = self._readable(history)
        if self._seq is None:
            prepared = self.cache.prepare(history)
            self._seq = prepared.seq_id
            held = prepared.reused
        else:
            held = common_prefix(self.cache.tokens(self._seq), history)
            held = min(held, len(history) - 1)
            self.cache.truncate(self._seq, held)
        self.cache.extend(self._seq, history[held:], n_logits=1)
        start = time.perf_counter()
        tokens: list[int] = []
        while len(tokens) < k:
            p = softmax(self.ctx.logits(0), 1.0)
            tok = int(np.argmax(p))
            if p[tok] < self.p_min or self.model.is_eog(tok):
                break
            tokens.append(tok)
            if len(tokens) < k:
                self.cache.extend(self._seq, [tok], n_logits=1)
        return Draft(tokens, (time.perf_counter() - start) * 1000)

    def accepted(self, history: list[int]) -> None:
        if self._seq is not None:
            held = common_prefix(self.cache.tokens(self._seq), self._readable(history))
            self.cache.truncate(self._seq, held)


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
        ours, theirs = target.token_text(token), draft.token_text(token)
        if ours != theirs:
            return f"token {token} differs ({ours!r} vs {theirs!r})"
    return None
