"""The speculative acceptance rule, on explicit verification logits."""

from __future__ import annotations

import numpy as np
import pytest

from lsp_coder.engine.sampling import probability, softmax, verify


def rows_with_argmax(argmaxes: list[int], vocab: int = 8) -> list[np.ndarray]:
    rows = []
    for a in argmaxes:
        row = np.zeros(vocab, dtype=np.float32)
        row[a] = 5.0
        rows.append(row)
    return rows


def test_greedy_accepts_while_argmax_matches_then_takes_the_target_token():
    rows = rows_with_argmax([3, 1, 4, 6])
    v = verify(rows, [3, 1, 5], 0.0, np.random.default_rng(0))
    assert (v.accepted, v.token) == (2, 4)


def test_greedy_all_accepted_gives_the_bonus_token():
    v = verify(rows_with_argmax([2, 2, 7]), [2, 2], 0.0, np.random.default_rng(0))
    assert (v.accepted, v.token) == (2, 7)


def test_greedy_first_mismatch_accepts_nothing():
    v = verify(rows_with_argmax([0, 1]), [5], 0.0, np.random.default_rng(0))
    assert (v.accepted, v.token) == (0, 0)


def test_row_count_is_checked():
    with pytest.raises(ValueError):
        verify(rows_with_argmax([0]), [1, 2], 0.0, np.random.default_rng(0))


@pytest.mark.parametrize("draft_is_model", [False, True])
def test_sampled_rule_keeps_the_target_distribution(draft_is_model):
    """The first emitted token must follow the target's softmax whatever the draft proposes."""
    rng = np.random.default_rng(1234)
    logits = np.array([2.0, 1.0, 0.5, 0.0, -1.0], dtype=np.float32)
    temperature = 0.8
    p = softmax(logits, temperature)
    q = np.array([0.1, 0.5, 0.2, 0.1, 0.1])
    counts = np.zeros(len(p))
    n = 20000
    for _ in range(n):
        if draft_is_model:
            d = int(rng.choice(len(q), p=q))
            probs = [q]
        else:
            d = 1  # a deterministic drafter always proposes token 1
            probs = None
        v = verify([logits, logits], [d], temperature, rng, probs)
        counts[d if v.accepted else v.token] += 1
    observed = counts / n
    # 20000 draws: the standard error of each frequency is below 0.0036; allow 4 of them.
    assert np.max(np.abs(observed - p)) < 0.015, (observed, p)


def test_a_tokens_probability_is_its_softmax_share_even_far_below_the_best():
    logits = np.array([2.0, 1.0, 0.5, -300.0], dtype=np.float32)
    shares = softmax(logits, 1.0)
    for token in range(3):
        assert probability(logits, token) == pytest.approx(shares[token], rel=1e-5)
    assert probability(logits, 3) == 0.0  # exp overflows: no warning, no error
    assert sum(probability(logits, t) for t in range(4)) == pytest.approx(1.0, rel=1e-5)
