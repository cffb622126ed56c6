"""The paired bootstrap behind bench crossfile's intervals."""

import math

import numpy as np
import pytest

from lsp_coder.bench.bootstrap import paired


def test_the_interval_of_a_known_mean_is_the_normal_one():
    # 400 fair coin flips: the mean's 95 % interval is about 0.5 +- 1.96 * sqrt(0.25 / 400)
    flips = [1.0, 0.0] * 200
    result = paired(flips, flips, resamples=4000)
    half = 1.96 * math.sqrt(0.25 / 400)
    assert result.base.value == 0.5
    assert result.base.low == pytest.approx(0.5 - half, abs=0.01)
    assert result.base.high == pytest.approx(0.5 + half, abs=0.01)


def test_identical_runs_differ_by_exactly_nothing():
    values = list(np.random.default_rng(1).random(50))
    result = paired(values, values)
    assert (result.difference.value, result.difference.low, result.difference.high) == (0, 0, 0)
    assert result.ratio.low == pytest.approx(1) and result.ratio.high == pytest.approx(1)


def test_pairing_narrows_the_difference_of_runs_that_move_together():
    rng = np.random.default_rng(2)
    base = rng.random(100) * 100
    other = base + 5 + rng.normal(0, 1, 100)  # the same cases, 5 points better
    result = paired(base, other)
    assert result.difference.low > 4 and result.difference.high < 6
    # unpaired, each run's own interval is far wider than that of the difference
    assert result.base.high - result.base.low > 5 * (result.difference.high
                                                      - result.difference.low)
    assert result.ratio.low > 1


def test_a_run_with_no_hit_has_no_ratio_and_runs_must_pair():
    result = paired([0, 0, 0, 0], [1, 0, 1, 0])
    assert math.isnan(result.ratio.value) and math.isnan(result.ratio.low)
    assert result.difference.value == 0.5
    with pytest.raises(ValueError):
        paired([1, 0], [1])
    with pytest.raises(ValueError):
        paired([], [])
