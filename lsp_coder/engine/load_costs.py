"""The batch costs a load uses, and whether a draft model would pay at them.

A table stored by an earlier load is checked against a single-token decode timed now: one
over 1.5x slower was measured while something else used the CPU (its batches look cheap against
single tokens, so drafts seem to pay where they do not) and is measured again. A calibration
where a larger batch costs clearly less than a smaller one (a thread stalled behind another
process), or whose single token is 1.5x slower than one timed right after it (a burst of
other work that ended), is tried once more, and one still like that is used but not kept.
"""

from __future__ import annotations

from pathlib import Path

from .costs import CALIBRATION_ATTEMPTS, BatchCosts, draft_can_pay, measure_prefill, time_single
from .costs_store import CostsStore
from .llama import Model
from .llama_context import Context
from .read_aside import ReadAside


def batch_costs(store: CostsStore | None, key: str, model: Model, ctx: Context,
                sizes: tuple[int, ...], aside: ReadAside | None) -> tuple[BatchCosts, str]:
    """``model``'s batch costs on ``ctx`` as ``store`` holds them under ``key``, else
    measured (and stored), and where they came from; with ``aside`` prompts are read
    there, so their speed is measured there."""
    costs = store.get(key) if store else None
    token = model.tokenize(" x")[-1]
    how = "measured" if costs is None else "stored"
    if costs is not None and costs.measured_busy(time_single(ctx, 0, token)):
        costs, how = None, "measured again (the stored table was slower)"
    if costs is None:
        costs, steady = _calibrate(ctx, token, sizes, aside)
        if not steady:  # the next load measures again
            how += " (beside a busy CPU: not kept)"
        elif store:
            store.put(key, costs)
    return costs, how


def _calibrate(ctx: Context, token: int, sizes: tuple[int, ...],
               aside: ReadAside | None) -> tuple[BatchCosts, bool]:
    """A measured table, and whether it looks measured on a machine as quiet as it is now
    (``plausible``, and a single token timed after it not 1.5x faster: another process's
    burst that ended during the calibration)."""
    costs = BatchCosts.calibrate(ctx, 0, token, sizes=sizes)
    steady = _steady(costs, ctx, token)
    for _ in range(CALIBRATION_ATTEMPTS - 1):
        if steady:
            break
        costs = BatchCosts.calibrate(ctx, 0, token, sizes=sizes)
        steady = _steady(costs, ctx, token)
    if aside is not None:
        costs.prefill_token_ms = measure_prefill(aside.ctx, 0, token)
        aside.ctx.seq_rm(0, 0, -1)
    return costs, steady


def _steady(costs: BatchCosts, ctx: Context, token: int) -> bool:
    return costs.plausible() and not costs.measured_busy(time_single(ctx, 0, token))


def draft_left_out(costs: BatchCosts, model_path: Path, draft_path: Path, max_draft: int) -> str:
    """Why a draft model at ``draft_path`` would not pay beside the target at ``model_path``
    ("" where it might), at a token time guessed from its size: a decode reads all of a
    model's weights."""
    try:
        size_ratio = draft_path.stat().st_size / max(model_path.stat().st_size, 1)
    except OSError:
        return ""  # loading it says what is wrong with it
    single = costs.ms(1)
    if draft_can_pay(costs, single * size_ratio, max_draft):
        return ""
    return (f"{draft_path.name} not loaded: a draft would not pay here (a batch of 2 tokens"
            f" costs {costs.ms(2):.0f} ms against {single:.0f} ms for one;"
            " speculative.draft_model = true loads it anyway)")
