"""What a ``lsp-coder bench editors`` run measured (``EditorsRun``), and what it prints and
draws: a row per run, the ratios its targets name, and memory and latency by number of
editors."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .figures import pyplot, quantile, save

SAME_MARK = "*"
"""Marks the runs where every editor typed in the same file."""
KILL_MARK = "!"
"""Marks the runs where the shared server was killed halfway."""


@dataclass(slots=True)
class EditorsRun:
    """One mode with N editors."""

    mode: str
    """``shared`` or ``own``."""
    editors: int
    """How many typed at once."""
    same_file: bool = False
    """Whether they all typed in the same file (each in its own window)."""
    latencies_ms: list[float] = field(default_factory=list)
    """Every key's time to its answer, all editors."""
    rss_peak_bytes: int = 0
    """The most memory all lsp-coder processes held at once while the editors typed."""
    prompt_tokens: int = 0
    """Prompt tokens of every request that reached a model."""
    reused_tokens: int = 0
    """Of those, the ones the KV cache held."""
    load_s: float = 0.0
    """From starting the editors until every one had its model."""
    cold_ms: float = float("nan")
    """The first answer in the first window of a file."""
    second_ms: float = float("nan")
    """The first answer in a second window on the same file, the first still open."""
    second_tokens: tuple[int, int] = (0, 0)
    """That answer's prompt tokens, and of them those the KV cache held."""
    answers: list[tuple[float, float, bool]] = field(default_factory=list)
    """Every answer: when it was asked and answered (perf_counter s), and whether it had a
    suggestion."""
    answered: int = 0
    """Requests answered (a result or an error)."""
    unanswered: int = 0
    """Requests that got no answer within ``editors.ANSWER_S`` (must be 0)."""
    kill: dict[str, Any] = field(default_factory=dict)
    """With ``--kill``: when the shared server was killed, and what followed."""
    skipped: str = ""
    """Why the run did not happen (memory)."""

    def summary(self) -> dict[str, Any]:
        lat = self.latencies_ms
        return {"mode": self.mode, "editors": self.editors, "same_file": self.same_file,
                "skipped": self.skipped,
                "keys": len(lat), "p50_ms": quantile(lat, 0.5), "p90_ms": quantile(lat, 0.9),
                "rss_peak_mib": self.rss_peak_bytes / 2**20,
                "rss_per_editor_mib": self.rss_peak_bytes / 2**20 / max(self.editors, 1),
                "reuse": self.reused_tokens / self.prompt_tokens if self.prompt_tokens else 0.0,
                "load_s": self.load_s, "cold_ms": self.cold_ms, "second_ms": self.second_ms,
                "second_prompt_tokens": self.second_tokens[0],
                "second_reused_tokens": self.second_tokens[1],
                "answered": self.answered, "unanswered": self.unanswered, "kill": self.kill}


def label(editors: int, same_file: bool) -> str:
    return f"{editors}{SAME_MARK if same_file else ''}"


def report_editors(runs: list[EditorsRun]) -> str:
    """One row per run, then the ratios the targets name."""
    lines = [f"{'editors':>7} {'mode':<7} {'keys':>5} {'p50 ms':>7} {'p90 ms':>7}"
             f" {'peak MiB':>9} {'MiB/ed.':>8} {'cache':>6} {'load s':>7} {'cold ms':>8}"
             f" {'2nd ms':>7} {'unans.':>6}"]
    for run in runs:
        s = run.summary()
        shown = label(run.editors, run.same_file)
        mode = run.mode + (KILL_MARK if run.kill else "")
        if run.skipped:
            lines.append(f"{shown:>7} {mode:<7} skipped: {run.skipped}")
            continue
        lines.append(f"{shown:>7} {mode:<7} {s['keys']:>5} {s['p50_ms']:>7.0f}"
                     f" {s['p90_ms']:>7.0f} {s['rss_peak_mib']:>9.0f}"
                     f" {s['rss_per_editor_mib']:>8.0f} {s['reuse']:>6.1%} {s['load_s']:>7.1f}"
                     f" {s['cold_ms']:>8.0f} {s['second_ms']:>7.0f} {s['unanswered']:>6}")
    if any(r.same_file for r in runs):
        lines.append(f"{SAME_MARK}: every editor typed in the same file, each in its own window")
    if any(r.kill for r in runs):
        lines.append(f"{KILL_MARK}: the shared server killed halfway through the typing")
    by = {(r.mode, r.editors, r.same_file): r for r in runs if not r.skipped and not r.kill}
    for run in runs:
        if run.kill:
            back = run.kill.get("suggestions_back_s")
            lines.append(f"shared, {run.editors} editors: server killed; {run.unanswered}"
                         " requests unanswered; suggestions back after "
                         + (f"{back:.1f} s" if back is not None else "never")
                         + f" (a load took {run.load_s:.1f} s)")
    for (mode, n, same), run in sorted(by.items()):
        if mode != "shared":
            continue
        title = f"shared, {label(n, same)} editors"
        one = by.get(("shared", 1, False)) or by.get(("own", 1, False))
        if one is not None and n > 1:
            ratio = run.rss_peak_bytes / one.rss_peak_bytes
            lines.append(f"{title}: memory {ratio:.2f}x one editor's")
        own = by.get(("own", n, same))
        if own is not None and n > 1:
            lines.append(f"{title}: p90 {quantile(run.latencies_ms, 0.9):.0f} ms"
                         f" against {quantile(own.latencies_ms, 0.9):.0f} ms with a model each")
        if run.cold_ms == run.cold_ms and run.cold_ms > 0:
            prompt, reused = run.second_tokens
            lines.append(f"{title}: a second window's first answer"
                         f" {run.second_ms / run.cold_ms:.2f} of a cold one ({reused} of its"
                         f" {prompt} prompt tokens from the cache)")
    return "\n".join(lines)


def plot_editors(runs: list[EditorsRun], path: Path) -> None:
    plt = pyplot()
    done = [r for r in runs if not r.skipped]
    if plt is None or not done:
        return
    fig, (mem, lat) = plt.subplots(1, 2, figsize=(10, 4))
    for mode, color in (("shared", "tab:blue"), ("own", "tab:orange")):
        mine = sorted((r for r in done if r.mode == mode), key=lambda r: r.editors)
        if not mine:
            continue
        xs = [r.editors for r in mine]
        mem.plot(xs, [r.rss_peak_bytes / 2**30 for r in mine], "o-", color=color, label=mode)
        lat.plot(xs, [quantile(r.latencies_ms, 0.9) for r in mine], "o-", color=color,
                 label=f"{mode} p90")
        lat.plot(xs, [statistics.median(r.latencies_ms) if r.latencies_ms else float("nan")
                      for r in mine], "o--", color=color, label=f"{mode} p50")
    mem.set(xlabel="editors typing", ylabel="resident memory, all processes (GiB)")
    lat.set(xlabel="editors typing", ylabel="time to a suggestion (ms)")
    mem.legend()
    lat.legend()
    save(plt, fig, path)
