"""The team bench's medians: a pause that showed nothing took longer than the pause."""

from __future__ import annotations

from lsp_coder.bench.team import EditorResult, TeamRun
from lsp_coder.bench.team_report import p50_ratio, table


def _run(name: str, shown: list[float], pauses: int) -> dict:
    run = TeamRun(name, 1, pause_ms=4000.0)
    run.results = [EditorResult(keys=10, pauses=pauses, shown_at_pause=shown,
                                missed_pauses=pauses - len(shown))]
    return run.summary()


def test_the_median_over_every_pause_counts_misses_as_longer_than_any_time():
    mostly_shown = _run("lsp-coder", [900.0, 1000.0, 1100.0], pauses=4)
    mostly_missed = _run("lsp-coder", [500.0], pauses=4)
    assert mostly_shown["p50_all_ms"] == 1100.0
    assert mostly_shown["p50_ms"] == 1000.0  # over the shown pauses only
    assert mostly_missed["p50_all_ms"] is None
    assert mostly_missed["p50_ms"] == 500.0


def test_the_ratio_is_a_bound_when_only_the_peer_missed_half_its_pauses():
    ours = _run("lsp-coder", [900.0, 1000.0, 1100.0], pauses=4)
    peer_shown = _run("llama.vim-style", [2000.0, 2200.0, 3000.0], pauses=4)
    peer_missed = _run("llama.vim-style", [], pauses=4)
    assert p50_ratio(ours, peer_shown) == "0.37"
    assert p50_ratio(ours, peer_missed).startswith("< 0.28 ")
    assert p50_ratio(peer_missed, ours).startswith("unknown")
    assert "| 1 | llama.vim-style | > 4000 |" in table([ours, peer_missed])
