"""What ``lsp-coder bench idle`` prints of a typing run: per kind of key the time to a
suggestion, the prompt tokens the cache held, the idle work's use, the characters accepted."""

from __future__ import annotations

import statistics
from typing import Any

from .human import KINDS, HumanRun
from .human_confidence import hiding, hiding_report


def summarize_human(run: HumanRun) -> dict[str, Any]:
    """p50/p95 time to suggestion per kind, cache reuse and the idle work's use."""
    out: dict[str, Any] = {"keys": len(run.keys), "wall_s": run.wall_s}
    for kind in KINDS:
        keys = ([k for k in run.keys if k.kind == "mid" and not k.cached] if kind == "mid_model"
                else [k for k in run.keys if k.kind == kind])
        lat = [k.latency_ms for k in keys]
        out[kind] = {
            "n": len(lat),
            "p50_ms": statistics.median(lat) if lat else float("nan"),
            "p95_ms": sorted(lat)[int(0.95 * (len(lat) - 1))] if lat else float("nan"),
            "evaluated_p50": statistics.median(
                [k.evaluated_tokens for k in keys if not k.cached] or [0]),
        }
    engine = [k for k in run.keys if not k.cached]
    prompt = sum(k.prompt_tokens for k in engine)
    out["reuse_ratio"] = sum(k.reused_tokens for k in engine) / prompt if prompt else 0.0
    out["evaluated_by_kind"] = {kind: sum(k.evaluated_tokens for k in engine if k.kind == kind)
                                for kind in ("open", "enter", "accept", "mid")}
    out["prefetches_taken"] = run.totals.get("prefetches_taken", 0)
    out["keys_raw"] = [[k.kind, round(k.latency_ms, 1), k.cached, k.prompt_tokens,
                        k.evaluated_tokens, k.pressed] for k in run.keys]
    out["accepted_chars"] = run.accepted_chars
    out["hiding"] = hiding(run.keys, run.accepted)
    out["short_prompts"] = run.totals.get("short_prompts", 0)
    out["held_sections"] = run.totals.get("held_sections", 0)
    out["unsure"] = run.totals.get("unsure", 0)
    out["shown"] = sum(1 for k in run.keys if k.text)
    idle = run.totals.get("idle", {})
    out["idle_evaluated"] = idle.get("evaluated_tokens", 0)
    out["idle_used"] = run.totals.get("idle_used_tokens", 0)
    out["idle_ms"] = idle.get("prefill_ms", 0.0)
    out["idle_kinds"] = idle.get("kinds", {})
    out["idle_preempted"] = idle.get("preempted", 0)
    out["idle_preempt_wait_max"] = idle.get("preempt_wait_ubatches_max", 0)
    return out


def report_human(summaries: dict[str, dict[str, Any]]) -> str:
    """A table: rows per kind, one column per run, then the ratios the targets name."""
    names = list(summaries)
    lines = [f"{'time to suggestion, p50 (p95) ms':<34}" + "".join(f"{n:>22}" for n in names)]
    for kind in KINDS:
        cells = "".join(
            f"{summaries[n][kind]['p50_ms']:>9.0f} ({summaries[n][kind]['p95_ms']:>6.0f})"
            f" n={summaries[n][kind]['n']:<3}" for n in names)
        lines.append(f"  {kind:<32}{cells}")
    for label, key, fmt in (("prompt tokens from the cache", "reuse_ratio", "{:.1%}"),
                            ("characters typed by accepting", "accepted_chars", "{:.0f}"),
                            ("suggestions shown", "shown", "{:.0f}"),
                            ("answers hidden as unsure", "unsure", "{:.0f}"),
                            ("answers from a short cold prompt", "short_prompts", "{:.0f}"),
                            ("answers that held the last section", "held_sections", "{:.0f}"),
                            ("answers from a running prefetch", "prefetches_taken", "{:.0f}"),
                            ("idle tokens evaluated", "idle_evaluated", "{:.0f}"),
                            ("  of them reused by a request", "idle_used", "{:.0f}"),
                            ("requests that stopped idle work", "idle_preempted", "{:.0f}"),
                            ("  most ubatches they waited", "idle_preempt_wait_max", "{:.0f}"),
                            ("wall time (s)", "wall_s", "{:.0f}")):
        lines.append(f"{label:<34}" + "".join(
            f"{fmt.format(summaries[n].get(key, 0)):>22}" for n in names))
    lines.append("prompt tokens evaluated by requests, by kind (the cache's misses):")
    for kind in ("open", "enter", "accept", "mid"):
        lines.append(f"  {kind:<32}" + "".join(
            f"{summaries[n]['evaluated_by_kind'][kind]:>22}" for n in names))
    for n in names:
        s = summaries[n]
        mid = s["mid_model"]["p50_ms"]
        used = s["idle_used"] / s["idle_evaluated"] if s["idle_evaluated"] else float("nan")
        lines.append(f"{n}: enter/mid_model {s['enter']['p50_ms'] / mid:.2f}x, accept/mid_model"
                     f" {s['accept']['p50_ms'] / mid:.2f}x; idle work used {used:.0%}")
    if len(names) >= 2:
        off, on = summaries[names[0]], summaries[names[-1]]
        lines.append(f"first request in a just-opened file, {names[-1]} against {names[0]}:"
                     f" {on['open']['p50_ms']:.0f} ms vs {off['open']['p50_ms']:.0f} ms ="
                     f" {on['open']['p50_ms'] / off['open']['p50_ms']:.2f} of it")
    hidden = hiding_report(summaries)
    return "\n".join(lines + ([hidden] if hidden else []))
