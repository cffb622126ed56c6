"""What speculation costs and earns on this machine, and how many tokens to draft.

A verification batch of b tokens costs ``BatchCosts.ms(b)``, measured at load and kept up to
date from real decodes. A drafter's tokens are accepted one after another with probability
``a`` each (estimated from its record, geometric: accepted / (accepted + rejections)). For k
drafted tokens a step then yields ``1 + a + a^2 + ... + a^k`` tokens for ``ms(k + 1)`` plus the
drafting time. The k with the best tokens per millisecond is used, and none at all when plain
decoding (one token per ``ms(1)``) is faster: on a 2-core CPU a batch of 8 costs about 6 single
tokens, so only drafts accepted nearly whole pay; on a GPU almost any draft does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .llama_context import Context

CALIBRATION_SIZES = (1, 2, 3, 4, 6, 8, 12, 16)

PREFILL_SAMPLE_MIN = 32
"""The fewest evaluated tokens whose time updates the prefill speed."""

BUSY_FACTOR = 1.5
"""A stored table whose single-token decode is this much slower than one timed at load (and
``BUSY_MIN_MS`` slower) was measured while something else used the CPU: it is measured again.
(A table faster than now is kept: the machine is busy now, and real decodes rescale it.)"""

BUSY_MIN_MS = 5.0
"""Below this, a difference of single-token times is timer and scheduling noise."""

CALIBRATION_ATTEMPTS = 2
"""Calibrations tried at a load until one looks measured on a quiet machine (``plausible``,
not ``measured_busy`` against a token timed after it); a last one that does not is used for
this load and not kept."""


def measure_prefill(ctx: Context, seq_id: int, token: int, n: int = 64) -> float:
    """Milliseconds per token of one ``n``-token read at the start of an empty sequence (left
    in it)."""
    start = time.perf_counter()
    ctx.decode([token] * n, 0, seq_id)
    return (time.perf_counter() - start) * 1000 / n


def time_single(ctx: Context, seq_id: int, token: int, repeats: int = 3) -> float:
    """Milliseconds of the fastest of ``repeats`` single-token decodes on an empty sequence
    (one more first, untimed, warms the weights and the graph up; emptied again after)."""
    ctx.decode([token], 0, seq_id)
    best = float("inf")
    for _ in range(repeats):
        ctx.seq_rm(seq_id, 1, -1)
        start = time.perf_counter()
        ctx.decode([token], 1, seq_id)
        best = min(best, (time.perf_counter() - start) * 1000)
    ctx.seq_rm(seq_id, 0, -1)
    return best


class BatchCosts:
    """Milliseconds per decode of b tokens on one sequence (interpolated between sizes).

    The calibration gives the shape (what b tokens cost against one); real decodes scale it
    as a whole, since a long context makes every size slower alike. Blending each size on its
    own would let the often-seen single token drift from the rarely seen batches and make
    drafts look cheaper than they are.
    """

    def __init__(self, measured: dict[int, float], prefill_token_ms: float = 0.0) -> None:
        self._ms = dict(sorted(measured.items()))
        self.scale = 1.0
        self.prefill_token_ms = prefill_token_ms or self._ms[max(self._ms)] / max(self._ms)

    @classmethod
    def calibrate(cls, ctx: Context, seq_id: int, token: int, repeats: int = 2,
                  sizes: tuple[int, ...] = CALIBRATION_SIZES) -> BatchCosts:
        """Time decodes of each size on an empty sequence (then emptied again)."""
        measured: dict[int, float] = {}
        prefill_token_ms = measure_prefill(ctx, seq_id, token)  # also warms the kernels up
        for size in sizes:
            best = float("inf")
            for _ in range(repeats):
                ctx.seq_rm(seq_id, 8, -1)
                start = time.perf_counter()
                ctx.decode([token] * size, 8, seq_id, n_logits=size)
                best = min(best, (time.perf_counter() - start) * 1000)
            measured[size] = best
        ctx.seq_rm(seq_id, 0, -1)
        return cls(measured, prefill_token_ms)

    def measured_busy(self, single_ms_now: float) -> bool:
        """Whether this table (stored by an earlier load) was measured while the machine was
        busier than now, by a single-token decode timed now (``time_single``)."""
        stored = self._calibrated(1)
        return stored > BUSY_FACTOR * single_ms_now and stored - single_ms_now > BUSY_MIN_MS

    def plausible(self) -> bool:
        """Whether a machine doing nothing else could have measured this table: a larger batch
        never costs clearly less than the next smaller one (a single token slower than two
        is a thread stalled behind another process, not the model)."""
        sizes = list(self._ms)
        for small, large in zip(sizes, sizes[1:]):
            if self._ms[small] - self._ms[large] > max(0.25 * self._ms[small], BUSY_MIN_MS):
                return False
        return True

    @property
    def measured(self) -> dict[int, float]:
        """The calibrated table, before any rescaling by real decodes."""
        return dict(self._ms)

    def _calibrated(self, size: int) -> float:
        sizes = list(self._ms)
        if size in self._ms:
            return self._ms[size]
        if size < sizes[0] or (size > sizes[-1] and len(sizes) == 1):
            return self._ms[sizes[0]] * size / sizes[0]
        if size > sizes[-1]:
            per_token = (self._ms[sizes[-1]] - self._ms[sizes[-2]]) / (sizes[-1] - sizes[-2])
            return self._ms[sizes[-1]] + per_token * (size - sizes[-1])
        lo = max(s for s in sizes if s < size)
        hi = min(s for s in sizes if s > size)
        return self._ms[lo] + (self._ms[hi] - self._ms[lo]) * (size - lo) / (hi - lo)

    def ms(self, size: int) -> float:
        return self._calibrated(size) * self.scale

    def observe(self, size: int, ms: float) -> None:
        """Blend a real decode's time into the scale of the whole table."""
        if size > 0 and ms > 0:
            self.scale = 0.95 * self.scale + 0.05 * ms / self._calibrated(size)

    def observe_prefill(self, tokens: int, ms: float) -> None:
        """Blend a real prefill's time per token into ``prefill_token_ms``. Prefills of fewer
        than ``PREFILL_SAMPLE_MIN`` tokens are left out: their time is mostly fixed costs."""
        if tokens >= PREFILL_SAMPLE_MIN and ms > 0:
            self.prefill_token_ms = 0.7 * self.prefill_token_ms + 0.3 * ms / tokens

    def as_dict(self) -> dict[int, float]:
        return {k: round(self.ms(k), 1) for k in self._ms}


@dataclass(slots=True)
class DrafterRecord:
    """What a drafter proposed and got accepted, and what its drafting cost.

    ``prior_accepted``/``prior_rejected`` give the acceptance estimate a starting point (the
    rest of the model's own suggestion is usually right; n-grams are a guess).
    """

    max_k: int
    prior_accepted: float = 1.0
    prior_rejected: float = 1.0
    prior_draft_ms: float = 0.0
    """Drafting time per token before any was measured (a draft model's own decode time)."""
    proposed: int = 0
    draft_ms: float = 0.0
    skipped: int = 0
    gain_ms_per_token: float = 0.0
    """Decode time the last ``choose_k`` expects to save per generated token."""
    _recent_accepted: float = 0.0
    _recent_rejections: float = 0.0
    _recent_ms: float = 0.0
    _recent_tokens: float = 0.0

    PROBE_EVERY = 32
    PROBE_TOKENS = 2
    REALIZED_MIN_TOKENS = 16
    """Recent drafted tokens needed before the measured rate overrides the estimate."""
    MEMORY = 0.95
    """Each verification weighs this much less than the next: the estimate follows the text."""

    @property
    def acceptance(self) -> float:
        """Chance that the next draft token is accepted, given the previous one was."""
        acc = self._recent_accepted + self.prior_accepted
        return acc / (acc + self._recent_rejections + self.prior_rejected)

    def draft_ms_per_token(self) -> float:
        return self.draft_ms / self.proposed if self.proposed else self.prior_draft_ms

    def realized_rate(self) -> float | None:
        """Tokens per ms of the recent drafted steps, drafting included (None: too few)."""
        if self._recent_tokens < self.REALIZED_MIN_TOKENS:
            return None
        return self._recent_tokens / self._recent_ms

    def choose_k(self, costs: BatchCosts, limit: int) -> int:
        """The number of tokens to draft now; 0 when drafting would be slower than not.

        A drafter that does not pay is still probed with ``PROBE_TOKENS`` every ``PROBE_EVERY``
        steps, so its estimate can recover when the text becomes predictable.
        """
        limit = min(limit, self.max_k)
        self.gain_ms_per_token = 0.0
        if limit <= 0:
            return 0
        a = self.acceptance
        per_draft = self.draft_ms_per_token()
        plain = 1.0 / costs.ms(1)
        best_k, best_rate = 0, plain
        expected = 0.0
        for k in range(1, limit + 1):
            expected += a ** k
            rate = (1.0 + expected) / (costs.ms(k + 1) + per_draft * k)
            if rate > best_rate:
                best_k, best_rate = k, rate
        realized = self.realized_rate()
        if realized is not None and realized < plain:
            best_k = 0  # the model says it pays, the clock says it does not
        if best_k:
            self.gain_ms_per_token = costs.ms(1) - 1.0 / best_rate
        if best_k == 0:
            self.skipped += 1
            if self.skipped >= self.PROBE_EVERY:
                self.skipped = 0
                return min(self.PROBE_TOKENS, limit)
        return best_k

    def record(self, proposed: int, accepted: int, draft_ms: float, step_ms: float) -> None:
        """One verification: ``step_ms`` is its whole time, drafting included; it emitted
        ``accepted + 1`` tokens."""
        rejected = accepted < proposed
        self.proposed += proposed
        self.draft_ms += draft_ms
        m = self.MEMORY
        self._recent_accepted = self._recent_accepted * m + accepted
        self._recent_rejections = self._recent_rejections * m + rejected
        self._recent_ms = self._recent_ms * m + step_ms
        self._recent_tokens = self._recent_tokens * m + accepted + 1


HOPEFUL_ACCEPTANCE = 0.9
"""The acceptance ``draft_can_pay`` grants a draft model it has not seen: more than a small
model of the same family usually gets, so "auto" loads one wherever it might pay."""

DRAFT_SPEEDUP_MIN = 1.2
"""The least decoding speedup, at ``HOPEFUL_ACCEPTANCE``, that pays for a draft model's memory
(0.6 GB for the embedded 0.5B)."""


def draft_can_pay(costs: BatchCosts, draft_token_ms: float, max_k: int,
                  acceptance: float = HOPEFUL_ACCEPTANCE) -> bool:
    """Whether a draft model drafting at ``draft_token_ms`` a token, each token accepted with
    ``acceptance``, would decode at least ``DRAFT_SPEEDUP_MIN`` times as fast as plain decoding
    at these batch costs, by the cost model's own rule (``DrafterRecord.choose_k``). On a
    2-core CPU a batch of 2 tokens costs about 1.6-2 single ones and the embedded 0.5B would
    make the 1.5B 0.8-1.0x as fast; on a GPU, where a batch costs about one token, 1.4x."""
    record = DrafterRecord(max_k=max_k, prior_accepted=acceptance,
                           prior_rejected=1.0 - acceptance, prior_draft_ms=draft_token_ms)
    if record.choose_k(costs, max_k) == 0:
        return False
    single = costs.ms(1)
    return single >= DRAFT_SPEEDUP_MIN * (single - record.gain_ms_per_token)
