"""The target's own greedy choices, remembered for the contexts it made them in.

At temperature 0 a token the target picked after a context is its verdict on that context: a
later request whose prompt runs along a remembered generation (the user typed through the
suggestion) can take the rest of it as verified, without a verification batch. The tokens are
known exactly, from the same model in the same context, so the output equals plain decoding.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GreedyTrace:
    """``tokens[i]`` is the target's unconstrained argmax after ``tokens[:i]``, for every
    ``i >= greedy_from``."""

    tokens: tuple[int, ...]
    greedy_from: int
    probs: tuple[float | None, ...] = ()
    """The model's probability of each of ``tokens`` when picked (None: not known); empty
    when none is known."""

    def prob(self, i: int) -> float | None:
        return self.probs[i] if i < len(self.probs) else None


class GreedyMemory:
    """The last few greedy generations, newest first."""

    def __init__(self, capacity: int = 8) -> None:
        self._traces: deque[GreedyTrace] = deque(maxlen=capacity)

    def __len__(self) -> int:
        return len(self._traces)

    def remember(self, tokens: list[int], greedy_from: int,
                 probs: list[float | None] | None = None) -> None:
        """Keep a generation (prompt then picks, with the probability of each where known);
        the traces it extends are dropped."""
        if greedy_from >= len(tokens):
            return
        trace = GreedyTrace(tuple(tokens), greedy_from, tuple(probs or ()))
        kept = []
        for old in self._traces:
            n = len(old.tokens)
            if n <= len(trace.tokens) and trace.tokens[:n] == old.tokens:
                if old.greedy_from < trace.greedy_from <= n:  # the two greedy runs join
                    # Before its own greedy picks the new trace holds its prompt and any
                    # healed picks, whose probabilities are conditional on the typed text:
                    # there the old trace's greedy probabilities stand.
                    joined = tuple(old.prob(i) if i < trace.greedy_from else trace.prob(i)
                                   for i in range(len(trace.tokens)))
                    trace = GreedyTrace(trace.tokens, old.greedy_from, joined)
                if trace.greedy_from <= old.greedy_from:
                    continue  # the new trace says all the old one did
            kept.append(old)
        self._traces.clear()
        self._traces.append(trace)
        self._traces.extend(kept[: (self._traces.maxlen or 1) - 1])

    def continuation(self, prompt: list[int]) -> list[int]:
        """The remembered greedy tokens after ``prompt`` (the longest), or []."""
        return self.recall(prompt)[0]

    def recall(self, prompt: list[int]) -> tuple[list[int], list[float | None]]:
        """The remembered greedy tokens after ``prompt`` (the longest) and the model's
        probability of each when it was picked (None: not known); ([], []) when none."""
        n = len(prompt)
        best: GreedyTrace | None = None
        key = tuple(prompt)
        for trace in self._traces:
            if (trace.greedy_from <= n < len(trace.tokens)
                    and (best is None or len(trace.tokens) > len(best.tokens))
                    and trace.tokens[:n] == key):
                best = trace
        if best is None:
            return [], []
        return list(best.tokens[n:]), [best.prob(i) for i in range(n, len(best.tokens))]

