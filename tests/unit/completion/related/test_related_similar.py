"""Choosing the similar windows: best first, no two overlapping, the ones shown last time
favoured (``similar.choose``)."""

from __future__ import annotations

from lsp_coder.completion.related.similar import (
    CHUNK_LINES,
    KEPT_BONUS,
    MIN_SCORE,
    Chunk,
    SimilarChunks,
    choose,
)


def chunk(uri: str, start: int, score: float) -> Chunk:
    return Chunk(uri, start, f"{uri}:{start}\n", score)


def starts(chunks: list[Chunk]) -> list[tuple[str, int]]:
    return [(c.uri, c.start_line) for c in chunks]


def test_the_best_windows_come_first_and_an_overlapping_one_gives_way():
    candidates = [chunk("a", 0, 0.5), chunk("a", 10, 0.4), chunk("b", 0, 0.3),
                  chunk("c", 0, MIN_SCORE / 2)]
    assert starts(choose(candidates, 3)) == [("a", 0), ("b", 0)]
    assert starts(choose(candidates, 1)) == [("a", 0)]


def test_a_window_shown_last_time_stays_until_one_twice_as_similar_comes():
    shown = ("a", 0)
    weaker = [chunk("a", 0, 0.10), chunk("b", 0, 0.19)]
    assert starts(choose(weaker, 1, (shown,))) == [shown]
    assert starts(choose(weaker, 1)) == [("b", 0)]
    stronger = [chunk("a", 0, 0.10), chunk("b", 0, 0.10 * KEPT_BONUS + 0.01)]
    assert starts(choose(stronger, 1, (shown,))) == [("b", 0)]
    # It also stays below the least similarity a new window needs, down to half of it; and
    # an overlapping window better than it waits behind it.
    faint = [chunk("a", 0, MIN_SCORE * 0.6), chunk("a", CHUNK_LINES // 2, MIN_SCORE * 1.1)]
    assert starts(choose(faint, 2, (shown,))) == [shown]
    assert starts(choose(faint, 2)) == [("a", CHUNK_LINES // 2)]
    gone = [chunk("a", 0, MIN_SCORE * 0.4)]
    assert choose(gone, 2, (shown,)) == []


def test_candidates_keep_overlapping_windows_down_to_half_the_least_similarity():
    lines = [f"alpha_{i} = beta_{i}\n" for i in range(40)]
    ranked = SimilarChunks().candidates("alpha_12 beta_12 alpha_15", [("f", "".join(lines))], 8)
    assert [c.start_line for c in ranked] == [0, 10]  # windows 0-19 and 10-29 share it all
    assert ranked[0].text == "".join(lines[:20]) and ranked[0].score == ranked[1].score
    assert SimilarChunks().candidates("gamma delta", [("f", "".join(lines))], 8) == []
