"""Paired bootstrap intervals over cases: two runs answered the same cases, so each resample
draws the same cases for both, and the interval of their difference (and of their ratio) is
that of the same lines answered two ways."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
"""Resamples of the cases."""


@dataclass(frozen=True, slots=True)
class Interval:
    """A statistic and its interval."""

    value: float
    """On the cases as drawn."""
    low: float
    """The interval's lower end (nan when no resample defines it)."""
    high: float
    """Its upper end."""


@dataclass(frozen=True, slots=True)
class Paired:
    """Two runs' means over the same cases, with intervals from the same resamples."""

    base: Interval
    """The mean of the run compared against (in-file only)."""
    other: Interval
    """The mean of the other run."""
    difference: Interval
    """Other minus base."""
    ratio: Interval
    """Other over base (nan where the base's mean is 0)."""


def paired(base: Sequence[float], other: Sequence[float], level: float = 0.95,
           resamples: int = RESAMPLES, seed: int = 0) -> Paired:
    """Percentile intervals at ``level`` for the means of two runs over the same cases and for
    their difference and ratio; ValueError when the runs differ in length or are empty."""
    a = np.asarray(base, dtype=float)
    b = np.asarray(other, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or not len(a):
        raise ValueError("paired runs need the same non-empty cases")
    picks = np.random.default_rng(seed).integers(0, len(a), size=(resamples, len(a)))
    means_a, means_b = a[picks].mean(axis=1), b[picks].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(means_a > 0, means_b / np.where(means_a > 0, means_a, 1), np.nan)
        ratio = b.mean() / a.mean() if a.mean() > 0 else float("nan")
    return Paired(_interval(a.mean(), means_a, level), _interval(b.mean(), means_b, level),
                  _interval(b.mean() - a.mean(), means_b - means_a, level),
                  _interval(ratio, ratios, level))


def _interval(value: float, samples: np.ndarray, level: float) -> Interval:
    kept = samples[~np.isnan(samples)]
    if not len(kept):
        return Interval(float(value), float("nan"), float("nan"))
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(kept, [tail, 100 - tail])
    return Interval(float(value), float(low), float(high))
