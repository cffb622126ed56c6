"""The model's confidence in an answer's first line, from the probabilities the engine gave
its tokens: what ``completion.min_confidence`` judges and the benches table."""

from __future__ import annotations


def first_line_confidence(token_probs: list[float | None], first_line_tokens: int,
                          in_word: bool = False) -> float | None:
    """The mean probability the model gave the tokens of the first line (the first
    ``first_line_tokens`` of ``token_probs``); None when none is known.

    ``in_word``: the answer goes on with the word the cursor is in. Its first token then
    finishes that word, a split of it the tokenizer seldom makes, and the model gives it a
    low probability however right it is (typed ``y``, answered ``our data``: 0.00), so it is
    left out when others follow."""
    line = token_probs[: max(1, first_line_tokens)]
    if in_word and len(line) > 1:
        line = line[1:]
    known = [p for p in line if p is not None]
    return sum(known) / len(known) if known else None


def continues_word(before: str, answer: str) -> bool:
    """Whether ``answer`` goes on with the word that ``before`` (the text up to the cursor)
    ends in."""
    return bool(before) and bool(answer) and _word_char(before[-1]) and _word_char(answer[0])


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"
