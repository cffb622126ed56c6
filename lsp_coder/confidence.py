"""The model's confidence in an answer's first line, from the probabilities the engine gave
its tokens: what ``completion.min_confidence`` judges and the benches table."""

from __future__ import annotations


def first_line_confidence(token_probs: list[float | None], first_line_tokens: int
                          ) -> float | None:
    """The mean probability the model gave the tokens of the first line (the first
    ``first_line_tokens`` of ``token_probs``); None when none is known.

    The mean, not the least likely token: a right line often holds one token the model
    hesitated over (in one typing run a quarter of the accepted characters came from answers
    with a token under 0.3). A token that finishes a word half typed counts with its
    probability among the tokens that spell what was typed (the engine's token healing)."""
    known = [p for p in token_probs[: max(1, first_line_tokens)] if p is not None]
    return sum(known) / len(known) if known else None
