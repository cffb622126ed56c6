"""Tests for the filter order and error handling in pipeline.py."""

import logging
import random

import pytest

from lsp_coder.completion.postprocess import POST_CACHE, PRE_CACHE, FilterContext, postprocess, run
from lsp_coder.completion.postprocess.closer_line import closer_line
from lsp_coder.completion.postprocess.drop_blank import drop_blank
from lsp_coder.completion.postprocess.drop_repetition import drop_repetition
from lsp_coder.completion.postprocess.drop_suffix_overlap import drop_suffix_overlap
from lsp_coder.completion.postprocess.limit_scope import limit_scope
from lsp_coder.completion.postprocess.mend_import_path import mend_import_path
from lsp_coder.completion.postprocess.trim_trailing_whitespace import trim_trailing_whitespace
from tests.unit.completion.postprocess.markers import parse_marked

CTX = FilterContext(prefix="x = ", suffix="\n")


def _boom(text: str, ctx: FilterContext) -> str:
    raise RuntimeError("boom")


def _not_a_str(text: str, ctx: FilterContext) -> str:
    return None  # type: ignore[return-value]


def _shout(text: str, ctx: FilterContext) -> str:
    return text.upper()


def test_order() -> None:
    assert PRE_CACHE == (trim_trailing_whitespace, drop_repetition, mend_import_path)
    assert POST_CACHE == (limit_scope, drop_suffix_overlap, trim_trailing_whitespace, drop_blank,
                          closer_line)


def test_filters_run_in_order() -> None:
    assert run((_shout, lambda t, c: t + "!"), "ab", CTX) == "AB!"
    assert run((lambda t, c: t + "!", _shout), "ab", CTX) == "AB!"
    assert run((lambda t, c: t * 2, lambda t, c: t + "!"), "ab", CTX) == "abab!"


@pytest.mark.parametrize("bad", [_boom, _not_a_str])
def test_failing_filter_leaves_text_unchanged(bad, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="lsp_coder.completion.postprocess.pipeline"):
        assert run((_shout, bad, lambda t, c: t + "!"), "ab", CTX) == "AB!"
    assert bad.__name__ in caplog.text


def test_discard_stops_the_pipeline() -> None:
    calls: list[str] = []

    def record(text: str, ctx: FilterContext) -> str:
        calls.append(text)
        return text

    assert run((record, lambda t, c: "", record), "ab", CTX) == ""
    assert calls == ["ab"]


def test_empty_filter_list_is_identity() -> None:
    assert run((), "  ab  ", CTX) == "  ab  "


def test_postprocess_runs_both_stages() -> None:
    ctx, text = parse_marked(
        "def f(x):\n    ║├y = x   \n    y = x\n    return y  \n\nprint(f(1))\n┤"
        "\n    return x\n"
    )
    # PRE: trims; POST: cuts at print(...) and drops nothing below (it differs).
    assert postprocess(text, ctx) == "y = x\n    y = x\n    return y"


def test_postprocess_discards_blank() -> None:
    ctx, text = parse_marked("x = ║├  \n \n┤\n")
    assert postprocess(text, ctx) == ""



def test_filters_never_raise_on_odd_input() -> None:
    rng = random.Random(1234)
    pieces = ["\n", "\r\n", " ", "\t", "    ", "x", "y = 1", ":", "{", "}", ")", "(", '"', "];"]

    def noise() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12)))

    for _ in range(400):
        ctx = FilterContext(prefix=noise(), suffix=noise(), multiline=rng.random() < 0.8)
        text = noise()
        for filter_ in PRE_CACHE + POST_CACHE:
            assert isinstance(filter_(text, ctx), str), filter_.__name__
