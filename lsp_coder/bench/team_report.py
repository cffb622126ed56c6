"""``lsp-coder bench team``'s report: the table of each run's summary, ours against the
peer's, and the plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .figures import pyplot, save


def table(summaries: list[dict[str, Any]]) -> str:
    head = ("| editors | client | p50 ms, all pauses | p50 / p95 ms, pauses shown"
            " | shown at pauses (answered empty) | backend requests/key | engine cached prompt |")
    lines = [head, "|---|---|---|---|---|---|---|"]
    for s in summaries:
        cached = "n/a" if s["cached_fraction"] is None else f"{s['cached_fraction']:.0%}"
        lines.append(f"| {s['editors']} | {s['run']} | {_p50_all(s)} |"
                     f" {s['p50_ms']} / {s['p95_ms']} |"
                     f" {s['shown_at_pause']}/{s['pauses']} ({s['empty_at_pause']}) |"
                     f" {s['requests_per_key']} |"
                     f" {cached} |")
    return "\n".join(lines)


def _p50_all(s: dict[str, Any]) -> str:
    """The median over every pause: "> pause" when half the pauses or more showed nothing."""
    return f"> {s['pause_ms']:.0f}" if s["p50_all_ms"] is None else f"{s['p50_all_ms']}"


def p50_ratio(ours: dict[str, Any], peer: dict[str, Any]) -> str:
    """Ours over the peer's median time to a suggestion over every pause.

    A pause that showed nothing took longer than the pause, so a median past the shown ones is
    only known to exceed the pause: the ratio is then a bound, or unknown.
    """
    mine, theirs, pause = ours["p50_all_ms"], peer["p50_all_ms"], peer["pause_ms"]
    if mine is not None and theirs is not None:
        return f"{mine / theirs:.2f}"
    if mine is not None:
        return f"< {mine / pause:.2f} (the peer's median is over the {pause:.0f} ms pause)"
    return "unknown (lsp-coder showed nothing at half the pauses or more)"


def ratios(summaries: list[dict[str, Any]]) -> list[str]:
    out = []
    by = {(s["run"], s["editors"]): s for s in summaries}
    for (run, n), ours in by.items():
        peer = by.get(("llama.vim-style", n))
        if run != "lsp-coder" or peer is None:
            continue
        p50 = p50_ratio(ours, peer)
        req = (f"{peer['requests_per_key'] / ours['requests_per_key']:.1f}x"
               if ours["requests_per_key"] else "inf")
        out.append(f"N={n}: p50 ours/peer = {p50}; backend requests per key: {req} fewer")
    return out


def plot(summaries: list[dict[str, Any]], path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for run, style in (("lsp-coder", "o-"), ("llama.vim-style", "s--")):
        rows = [s for s in summaries if s["run"] == run]
        known = [s for s in rows if s["p50_all_ms"] is not None]
        if known:
            left.plot([s["editors"] for s in known], [s["p50_all_ms"] for s in known], style,
                      label=f"{run} p50, all pauses")
        over = [s for s in rows if s["p50_all_ms"] is None]
        if over:  # half the pauses or more showed nothing: the median is past the pause
            left.plot([s["editors"] for s in over], [s["pause_ms"] for s in over], "^",
                      color=left.lines[-1].get_color() if known else None,
                      label=f"{run} p50 over the pause")
        if rows:
            right.plot([s["editors"] for s in rows], [s["requests_per_key"] for s in rows],
                       style, label=run)
    left.set_xlabel("editors on one engine")
    left.set_ylabel("ms from the key before a pause to a suggestion\n(none shown: longer)")
    left.set_yscale("log")
    left.legend(fontsize=8)
    right.set_xlabel("editors on one engine")
    right.set_ylabel("backend requests per keystroke")
    right.set_yscale("log")
    right.legend(fontsize=8)
    save(plt, fig, path)
    return True
