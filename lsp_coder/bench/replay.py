"""``lsp-coder bench typing``: replay typing over real files against the real server, in one run.

Each run starts a fresh server over stdio and types the same traces key by key, asking for an
inline completion after every key and waiting for it. The runs differ in one switch each:

- ``cached``: the product as configured (prefix cache, suggestion cache, speculation);
- ``naive``: the prefix cache off, every prompt evaluated whole (first keys only: it is slow);
- ``nomemory``: speculation by verification batches only (the greedy memory off);
- ``nospec``: speculation off;
- ``nocontext``: no other files' section (``context.budget_tokens = 0``): what the section
  costs in latency and cache reuse.

It prints a table per run, the ratios that matter (naive/cached latency, speculation's decode
speed-up and agreement, acceptance per drafter), writes a PNG of latency per keystroke and the
raw numbers as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..client.session import Session
from ..client.trace import Trace, default_files, make_trace
from .figures import pyplot, quantile, save
from .options import server_options


@dataclass(slots=True)
class Keystroke:
    index: int
    file: str
    latency_ms: float
    text: str
    cached: bool
    prompt_tokens: int = 0
    reused_tokens: int = 0
    evaluated_tokens: int = 0
    generated_tokens: int = 0
    prefill_ms: float = 0.0


@dataclass(slots=True)
class RunResult:
    name: str
    keys: list[Keystroke] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)
    rss_bytes: int = 0
    wall_s: float = 0.0


async def _replay(name: str, traces: list[Trace], options: dict[str, Any], key_ms: float,
                  ask_at: set[int] | None = None, progress: bool = True,
                  server_log: Path | None = None, settle: bool = False) -> RunResult:
    """Type every trace; ask for a completion after each key (or only at ``ask_at`` keys)."""
    session = Session(options, server_log=server_log)
    result = RunResult(name)
    start = time.perf_counter()
    await session.start_loaded(name)
    index = 0
    try:
        for trace in traces:
            session.open(trace.uri, trace.text)
            offset = trace.offset
            for ch in trace.typed:
                offset = session.insert(offset, ch)
                if ask_at is not None and index not in ask_at:
                    index += 1
                    continue
                sent = time.perf_counter()
                text = await session.inline(offset)
                latency = (time.perf_counter() - sent) * 1000
                if latency < key_ms:
                    await asyncio.sleep((key_ms - latency) / 1000)
                snapshot = await session.stats()
                recent = snapshot["recent"][-1]
                while settle and snapshot["totals"].get("busy"):
                    await asyncio.sleep(0.02)
                    snapshot = await session.stats()
                key = Keystroke(index, trace.path.name, latency, text, recent["cached"])
                for attr in ("prompt_tokens", "reused_tokens", "evaluated_tokens",
                             "generated_tokens", "prefill_ms"):
                    setattr(key, attr, recent.get(attr, 0))
                result.keys.append(key)
                index += 1
                if progress and index % 10 == 0:
                    print(f"  {name}: {index} keys", flush=True)
        stats = await session.stats()
        result.totals = stats["totals"]
        result.rss_bytes = session.rss_bytes()
    finally:
        await session.close()
    result.wall_s = time.perf_counter() - start
    return result


def summarize(run: RunResult) -> dict[str, Any]:
    keys = run.keys
    engine = [k for k in keys if not k.cached]
    warm = [k.latency_ms for k in keys[1:]]
    warm_engine = [k.latency_ms for k in engine[1:]]
    prompt = sum(k.prompt_tokens for k in engine)
    t = run.totals
    decode_s = t.get("decode_ms", 0) / 1000
    return {
        "keys": len(keys),
        "cold_ms": keys[0].latency_ms if keys else float("nan"),
        "cold_prefill_ms": keys[0].prefill_ms if keys else float("nan"),
        "warm_p50_ms": statistics.median(warm) if warm else float("nan"),
        "warm_p95_ms": quantile(warm, 0.95),
        "engine_p50_ms": statistics.median(warm_engine) if warm_engine else float("nan"),
        "engine_p95_ms": quantile(warm_engine, 0.95),
        "suggestion_cache_hits": sum(k.cached for k in keys),
        "reuse_ratio": (sum(k.reused_tokens for k in engine) / prompt) if prompt else 0.0,
        "evaluated_per_key": sum(k.evaluated_tokens for k in keys) / max(1, len(keys)),
        "generated_tokens": t.get("generated_tokens", 0),
        "known_tokens": t.get("known_tokens", 0),
        "decode_s": decode_s,
        "engine_requests": (t.get("requests", 0) - t.get("cache_hits", 0)
                            + t.get("background", 0)),
        "decode_tok_s": t.get("generated_tokens", 0) / decode_s if decode_s else 0.0,
        "decoded_tok_s": ((t.get("generated_tokens", 0) - t.get("known_tokens", 0)) / decode_s
                          if decode_s else 0.0),
        "drafters": t.get("drafters", {}),
        "rss_mib": run.rss_bytes / 2**20,
        "kv_used_mib": t.get("kv_used_bytes", 0) / 2**20,
        "wall_s": run.wall_s,
    }


def _table(summaries: dict[str, dict[str, Any]]) -> str:
    rows = [
        ("keystrokes", "keys", "{:.0f}"),
        ("cold latency (ms)", "cold_ms", "{:.0f}"),
        ("cold prefill (ms)", "cold_prefill_ms", "{:.0f}"),
        ("warm p50 (ms)", "warm_p50_ms", "{:.0f}"),
        ("warm p95 (ms)", "warm_p95_ms", "{:.0f}"),
        ("engine-only p50 (ms)", "engine_p50_ms", "{:.0f}"),
        ("engine-only p95 (ms)", "engine_p95_ms", "{:.0f}"),
        ("suggestion-cache hits", "suggestion_cache_hits", "{:.0f}"),
        ("prompt tokens reused", "reuse_ratio", "{:.1%}"),
        ("tokens evaluated / key", "evaluated_per_key", "{:.1f}"),
        ("generated tokens", "generated_tokens", "{:.0f}"),
        ("  from greedy memory", "known_tokens", "{:.0f}"),
        ("decode time (s)", "decode_s", "{:.1f}"),
        ("decode tokens / s", "decode_tok_s", "{:.1f}"),
        ("  memory excluded", "decoded_tok_s", "{:.1f}"),
        ("server RSS (MiB)", "rss_mib", "{:.0f}"),
        ("KV in use (MiB)", "kv_used_mib", "{:.1f}"),
        ("wall time (s)", "wall_s", "{:.0f}"),
    ]
    names = list(summaries)
    width = max(len(r[0]) for r in rows) + 2
    lines = [" " * width + "".join(f"{n:>12}" for n in names)]
    for label, key, fmt in rows:
        cells = "".join(f"{fmt.format(summaries[n][key]):>12}" for n in names)
        lines.append(f"{label:<{width}}{cells}")
    return "\n".join(lines)


def _plot(runs: dict[str, RunResult], path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for name, run in runs.items():
        ax.plot([k.index for k in run.keys], [max(k.latency_ms, 0.1) for k in run.keys],
                marker=".", linewidth=1, label=name)
    ax.set_yscale("log")
    ax.set_xlabel("keystroke")
    ax.set_ylabel("latency (ms, log)")
    ax.set_title("lsp-coder: inline completion latency per keystroke")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(plt, fig, path)
    return True


def _agreement(a: RunResult, b: RunResult) -> float:
    pairs = list(zip(a.keys, b.keys))
    return sum(x.text == y.text for x, y in pairs) / len(pairs) if pairs else float("nan")


async def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    files = args.files or default_files()
    traces = [make_trace(Path(f), args.lines) for f in files]
    wanted = [r.strip() for r in args.runs.split(",") if r.strip()]
    print(f"bench: {len(traces)} files, {sum(len(t.typed) for t in traces)} keystrokes;"
          f" runs: {', '.join(wanted)}", flush=True)
    runs: dict[str, RunResult] = {}
    plans = {
        "cached": server_options(args),
        "nomemory": server_options(args, speculative={"greedy_memory": False}),
        "nospec": server_options(args, speculative={"enabled": False}),
        "naive": server_options(args, cache={"reuse": False}),
        "nocontext": server_options(args, context={"budget_tokens": 0}),
    }
    for name in [n for n in plans if n in wanted]:
        ask_at = None
        if name == "naive":
            # Re-reading the whole prompt is slow: ask only at the first keys that reached the
            # engine in the cached run, so both runs are compared on the same requests.
            engine_keys = [k.index for k in runs["cached"].keys if not k.cached] if (
                "cached" in runs) else list(range(len(traces[0].typed)))
            ask_at = set(engine_keys[: args.naive_keys])
        log = None
        if args.server_log is not None:
            path = args.server_log
            log = path.with_name(f"{path.stem}-{name}{path.suffix}")
        runs[name] = await _replay(name, traces, plans[name], args.key_ms, ask_at,
                                   server_log=log, settle=args.settle)
    summaries = {name: summarize(run) for name, run in runs.items()}
    print()
    print(_table(summaries))
    report: dict[str, Any] = {"summaries": summaries}
    print()
    if "cached" in runs and "naive" in runs:
        asked = {k.index: k for k in runs["naive"].keys[1:]}
        same = [k for k in runs["cached"].keys if k.index in asked]
        if same:
            for label, attr in (("latency", "latency_ms"), ("prefill", "prefill_ms")):
                naive = statistics.median(getattr(k, attr) for k in asked.values())
                cached = statistics.median(getattr(k, attr) for k in same)
                ratio = naive / max(cached, 1e-3)
                report[f"naive_over_cached_{label}_p50"] = ratio
                print(f"{'prefix cache' if label == 'latency' else '':<13} {label} p50 on the"
                      f" same {len(same)} warm engine requests: naive {naive:.0f} ms, cached"
                      f" {cached:.0f} ms = {ratio:.1f}x")
    if "cached" in runs:
        s = summaries["cached"]
        cold = s["cold_prefill_ms"]
        hits = [k.latency_ms for k in runs["cached"].keys if k.cached]
        if hits:
            print(f"typing through a suggestion: {len(hits)} keys answered from the suggestion"
                  f" cache, p50 {statistics.median(hits):.1f} ms,"
                  f" p95 {quantile(hits, 0.95):.1f} ms")
        print(f"cold prefill {cold:.0f} ms; warm p50 {s['warm_p50_ms']:.0f} ms ="
              f" 1/{cold / max(s['warm_p50_ms'], 1e-3):.0f} of it;"
              f" {s['reuse_ratio']:.1%} of prompt tokens from the cache")
    for name in ("cached", "nomemory"):
        if name in runs and "nospec" in runs:
            report[name] = _speculation_report(name, summaries[name], summaries["nospec"],
                                               _agreement(runs[name], runs["nospec"]))
    args.out.mkdir(parents=True, exist_ok=True)
    png = args.out / "latency.png"
    if _plot(runs, png):
        print(f"\nplot: {png}")
    raw = {name: [asdict(k) for k in run.keys] for name, run in runs.items()}
    (args.out / "bench.json").write_text(json.dumps({"report": report, "keys": raw}, indent=1))
    print(f"raw numbers: {args.out / 'bench.json'}")
    return report


def _speculation_report(name: str, on: dict[str, Any], off: dict[str, Any],
                        agree: float) -> dict[str, float]:
    """Print and return decode speed with speculation (run ``name``) over without it."""
    speedup = on["decode_tok_s"] / off["decode_tok_s"] if off["decode_tok_s"] else 0.0
    strict = on["decoded_tok_s"] / off["decoded_tok_s"] if off["decoded_tok_s"] else 0.0
    print(f"speculation ({name} vs nospec): decode {on['decode_tok_s']:.1f} vs"
          f" {off['decode_tok_s']:.1f} tokens/s = {speedup:.2f}x;"
          f" {agree:.0%} of suggestions identical")
    if on["known_tokens"]:
        print(f"  not counting the {on['known_tokens']} tokens taken from the greedy memory:"
              f" {on['decoded_tok_s']:.1f} vs {off['decoded_tok_s']:.1f} tokens/s = {strict:.2f}x")
    print(f"  engine requests {on['engine_requests']} vs {off['engine_requests']},"
          f" tokens {on['generated_tokens']} vs {off['generated_tokens']},"
          f" decode time {on['decode_s']:.1f} vs {off['decode_s']:.1f} s")
    for drafter, d in sorted(on["drafters"].items()):
        rate = d["accepted"] / d["proposed"] if d["proposed"] else 0.0
        print(f"  drafter {drafter:<12} proposed {d['proposed']:5d}  accepted"
              f" {d['accepted']:5d}  ({rate:.0%})")
    return {"speedup": speedup, "speedup_memory_excluded": strict, "agreement": agree}
