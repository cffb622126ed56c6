"""Token healing: the prompt holds back the last typed token (``GenerateRequest.heal``), and
the first picks must spell the text it held, however the model splits it into tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .sampling import pick, probability


class Pieces(Protocol):
    """What healing needs of a model (``llama.Model``)."""

    def healing_candidates(self, rest: bytes) -> np.ndarray: ...

    def piece(self, token: int) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Pick:
    """The next token, picked under what is left of the healing text."""

    token: int
    """The token picked."""
    rest: bytes
    """The healing text still to spell after it."""
    constrained: bool
    """Whether healing (or sampling) made the pick: no greedy pick to remember."""
    prob: float
    """The model's probability of it: under healing, among the tokens that spell the typed
    text (given what the user typed: the token that finishes a word half typed is not
    unlikely for the words it could have been)."""


def choose(model: Pieces, logits: np.ndarray, rest: bytes, temperature: float,
           rng: np.random.Generator) -> Pick:
    """Pick from ``logits`` so the text goes on spelling ``rest`` (unconstrained when it is
    empty or no token spells it: the constraint is dropped)."""
    if rest:
        allowed = model.healing_candidates(rest)
        if len(allowed) > 0:
            candidates = logits[allowed]
            at = pick(candidates, temperature, rng)
            token = int(allowed[at])
            constrained = temperature > 0 or token != int(np.argmax(logits))
            return Pick(token, _after(model, token, rest), constrained,
                        probability(candidates, at))
    token = pick(logits, temperature, rng)
    return Pick(token, b"", bool(rest), probability(logits, token))


def spelled(model: Pieces, token: int, rest: bytes) -> bytes | None:
    """The healing text left to spell after ``token``; None when ``token`` does not spell the
    start of ``rest``."""
    if token not in model.healing_candidates(rest):
        return None
    return _after(model, token, rest)


def _after(model: Pieces, token: int, rest: bytes) -> bytes:
    piece = model.piece(token)
    return b"" if piece.startswith(rest) else rest[len(piece) :]
