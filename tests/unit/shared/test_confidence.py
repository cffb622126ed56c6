"""The model's confidence in an answer's first line, the measure completion.min_confidence
and the benches share."""

import pytest

from lsp_coder.confidence import continues_word, first_line_confidence


def test_the_mean_of_the_first_lines_known_probabilities():
    probs = [0.9, None, 0.5, 0.1, 0.01]  # two tokens after the first line are not counted
    assert first_line_confidence(probs, 3) == pytest.approx(0.7)
    assert first_line_confidence(probs, 0) == 0.9  # no line break yet: the first token
    assert first_line_confidence([None, None], 2) is None
    assert first_line_confidence([], 0) is None  # a serving engine's answer


def test_a_first_token_that_finishes_the_typed_word_is_left_out():
    probs = [0.001, 0.9, 0.8]  # typed "y", answered "our data"
    assert first_line_confidence(probs, 3, in_word=True) == pytest.approx(0.85)
    assert first_line_confidence(probs, 3) == pytest.approx(0.567, abs=1e-3)
    assert first_line_confidence([0.001], 1, in_word=True) == 0.001  # nothing else to judge


@pytest.mark.parametrize(("before", "answer", "expected"), [
    ("y", "our data", True), ("x_", "1 = 2", True), ("é", "t", True),
    ("x ", "= 1", False), ("f(", "x)", False), ("x", " = 1", False), ("", "x", False),
    ("x", "", False), ("x", ".y", False),
])
def test_continues_word(before, answer, expected):
    assert continues_word(before, answer) is expected
