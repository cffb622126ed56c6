"""The model's confidence in an answer's first line, the measure completion.min_confidence
and the benches share."""

import pytest

from lsp_coder.confidence import first_line_confidence


def test_the_mean_of_the_first_lines_known_probabilities():
    probs = [0.9, None, 0.5, 0.1, 0.01]  # two tokens after the first line are not counted
    assert first_line_confidence(probs, 3) == pytest.approx(0.7)
    assert first_line_confidence(probs, 0) == 0.9  # no line break yet: the first token
    assert first_line_confidence([None, None], 2) is None
    assert first_line_confidence([], 0) is None  # a serving engine's answer


def test_one_unlikely_token_does_not_sink_a_line_the_model_is_sure_of():
    assert first_line_confidence([0.95, 0.9, 0.05, 0.99, 0.97], 5) > 0.7
    assert first_line_confidence([0.3, 0.2, 0.4], 3) < 0.5
