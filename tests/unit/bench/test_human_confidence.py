"""What hiding unsure answers would cost a typist, tabled from one run (bench idle)."""

import pytest

from lsp_coder.bench.human import Key
from lsp_coder.bench.human_confidence import answer_confidence, hiding, hiding_report


def test_a_cached_answer_carries_the_confidence_of_the_model_answer_before_it():
    before = [Key("enter", 900.0, False, text="return x", confidence=0.25),
              Key("mid", 2.0, False, text="", confidence=None)]
    model = {"cached": False, "token_probs": [0.9, 0.35, None, 0.2], "first_line_tokens": 3}
    assert answer_confidence(model, before) == pytest.approx(0.625)  # its first line's mean
    assert answer_confidence({"cached": True}, before) == 0.25
    assert answer_confidence({"cached": True}, []) is None
    assert answer_confidence({"cached": False}, before) is None  # a remote engine's


def test_hiding_counts_the_answers_below_each_threshold_and_the_characters_they_gave():
    keys = [Key("enter", 900.0, False, text="return x", confidence=0.15),
            Key("mid", 2.0, True, text="eturn x", confidence=0.15),  # from the cache
            Key("mid", 700.0, False, text="y = 1", confidence=0.45),
            Key("mid", 700.0, False, text="", confidence=0.05),  # nothing shown
            Key("mid", 700.0, False, text="", confidence=0.05, unsure=True)]  # hidden
    table = hiding(keys, [(7, 0.15), (5, 0.45), (3, None)])
    assert table["answers"] == table["known"] == 3
    assert table["0.1"] == {"hidden": 1, "enter": 0, "mid": 1, "accepted_lost": 0}
    assert table["0.2"] == {"hidden": 2, "enter": 1, "mid": 1, "accepted_lost": 7}
    assert table["0.5"] == {"hidden": 3, "enter": 1, "mid": 2, "accepted_lost": 12}
    report = hiding_report({"run": {"hiding": table, "accepted_chars": 15},
                            "remote": {"hiding": {"known": 0}, "accepted_chars": 4}})
    assert "   0.2:   2 (1, 1), 7 of 15 characters" in report
    assert "remote" not in report
