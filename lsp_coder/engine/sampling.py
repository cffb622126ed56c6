"""Choosing tokens from logits, the speculative acceptance rule, and counting near ties (choices
that batch numerics may flip).

Greedy (temperature 0): accept a draft token while it equals the target's argmax, then emit the
target's argmax at the first mismatch. Sampled: speculative rejection sampling against the
distribution the drafter proposed from. The emitted tokens are distributed exactly as the
target's samples would be only when that distribution is the true one: a deterministic drafter
(every drafter here, the draft model included, proposes by argmax) is a one-hot proposal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

NEAR_TIE_LOGIT_GAP = 0.05
"""Logit gap under which batch numerics may flip a greedy choice (recorded, not hidden)."""


def softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Probabilities of ``logits / temperature`` (float64, sums to 1)."""
    z = logits.astype(np.float64) / max(temperature, 1e-6)
    z -= z.max()
    p = np.exp(z)
    return p / p.sum()


def probability(logits: np.ndarray, token: int) -> float:
    """The model's own probability of ``token`` (the softmax of ``logits`` at temperature 1),
    as 1 / sum(exp(logit - logit[token])): one pass, in the logits' own precision; a token
    far below the best comes out as 0."""
    with np.errstate(over="ignore"):
        return float(1.0 / np.exp(logits - logits[token]).sum(dtype=np.float64))


def pick(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """One token: argmax at temperature 0, else a sample."""
    if temperature <= 0:
        return int(np.argmax(logits))
    p = softmax(logits, temperature)
    return int(rng.choice(len(p), p=p))


@dataclass(frozen=True, slots=True)
class Verdict:
    """``accepted`` draft tokens were kept; ``token`` is the target's own next token."""

    accepted: int
    token: int


def verify(rows: Sequence[np.ndarray], draft: Sequence[int], temperature: float,
           rng: np.random.Generator, draft_probs: Sequence[np.ndarray] | None = None) -> Verdict:
    """Apply the acceptance rule to the target's logits over ``[last, d1..dk]``.

    Args:
        rows: k+1 logits rows; ``rows[i]`` predicts the token after ``draft[:i]``.
        draft: the k proposed tokens.
        temperature: 0 for greedy.
        rng: randomness for the sampled rule.
        draft_probs: the drafter's distribution for each draft token (sampled rule only);
            None means a deterministic drafter (a one-hot proposal).

    Returns:
        How many draft tokens were accepted and the token that follows them.
    """
    if len(rows) != len(draft) + 1:
        raise ValueError(f"need {len(draft) + 1} logits rows, got {len(rows)}")
    if temperature <= 0:
        for i, tok in enumerate(draft):
            best = int(np.argmax(rows[i]))
            if best != tok:
                return Verdict(i, best)
        return Verdict(len(draft), int(np.argmax(rows[-1])))
    for i, tok in enumerate(draft):
        p = softmax(rows[i], temperature)
        if draft_probs is None:
            q = np.zeros_like(p)
            q[tok] = 1.0
        else:
            q = draft_probs[i]
        if q[tok] > 0 and rng.random() < min(1.0, p[tok] / q[tok]):
            continue
        residual = np.maximum(p - q, 0.0)
        total = residual.sum()
        if total <= 0:
            return Verdict(i, int(rng.choice(len(p), p=p)))
        return Verdict(i, int(rng.choice(len(p), p=residual / total)))
    return Verdict(len(draft), pick(rows[-1], temperature, rng))


def count_near_ties(rows: list[np.ndarray]) -> int:
    ties = 0
    for row in rows:
        top2 = np.partition(row, -2)[-2:]
        if abs(float(top2[1] - top2[0])) < NEAR_TIE_LOGIT_GAP:
            ties += 1
    return ties
