"""One rising percentage over the weighted stages of a load."""

from __future__ import annotations

from lsp_coder.load_progress import LoadProgress, Stage


def _progress(*sizes: int) -> tuple[LoadProgress, list[tuple[int, str]]]:
    seen: list[tuple[int, str]] = []
    stages = [Stage(f"s{i}", f"stage {i}", size) for i, size in enumerate(sizes)]
    return LoadProgress(stages, lambda percent, label: seen.append((percent, label))), seen


def test_stages_are_weighed_by_size_and_the_percentage_never_falls():
    progress, seen = _progress(100, 300)
    first, second = progress.stage("s0"), progress.stage("s1")
    first(50, 100)
    assert seen == [(12, "stage 0")]
    first(100, 100)
    first(10, 100)  # a stage that restarts (a second pass over the file) does not go back
    second(0, 1000)
    second(500, 1000)
    assert seen == [(12, "stage 0"), (25, "stage 0"), (62, "stage 1")]
    second(1000, 1000)
    progress.finish()  # already complete: no second 100
    assert seen[-1] == (100, "stage 1") and [p for p, _ in seen].count(100) == 1


def test_finish_counts_stages_that_never_ran():
    progress, seen = _progress(10, 10)
    progress.stage("s0")(1, 1)
    progress.finish()
    assert seen == [(50, "stage 0"), (100, "")]


def test_an_unplanned_stage_has_no_callback_and_an_empty_plan_reports_nothing():
    progress, seen = _progress(10)
    assert progress.stage("elsewhere") is None
    empty, nothing = _progress()
    empty.finish()
    assert nothing == [] and empty.percent == 0
