"""``lsp-coder bench soak --keys N``: N keystrokes against one server, memory sampled as it goes.

The traces are typed over and over, each pass into documents under new names that are closed
afterwards, the way an editor does it: a key every ``--key-ms`` with an inline completion asked
after each without waiting for the answer (the server's debounce, supersede and cancel at work),
and at the end of each line a pause until the answer is there. Every ``--every`` keys the
server's resident memory is sampled with the time to an answer at the line ends since the last
sample.
A leak shows as RSS that keeps growing after the first windows (model, KV cache and caches
warm up first).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..client.session import Session
from ..client.trace import default_files, make_trace

DOCUMENT_NAMES = 20
"""Passes cycle over this many document names, so closed documents' state must be freed."""


async def run_soak(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    """Type ``args.soak`` keys; returns the samples and a summary (also printed)."""
    traces = [make_trace(Path(f), args.lines) for f in (args.files or default_files())]
    session = Session(options)
    await session.start_loaded("soak")
    samples: list[dict[str, Any]] = []
    window: list[float] = []
    keys, failures, start = 0, 0, time.perf_counter()
    samples.append({"keys": 0, "rss_mib": session.rss_bytes() / 2**20})
    print(f"soak: {args.soak} keystrokes over {len(traces)} files; RSS sampled every"
          f" {args.soak_every} keys", flush=True)
    try:
        pass_no = 0
        while keys < args.soak:
            for trace in traces:
                uri = f"file:///soak/{pass_no % DOCUMENT_NAMES}/{trace.path.name}"
                session.open(uri, trace.text)
                offset = trace.offset
                typed = trace.typed
                asked: list[asyncio.Future] = []
                for i, ch in enumerate(typed):
                    offset = session.insert(offset, ch)
                    sent = time.perf_counter()
                    asked.append(asyncio.ensure_future(session.inline(offset)))
                    keys += 1
                    if i + 1 < len(typed) and typed[i + 1] != "\n":
                        await asyncio.sleep(args.key_ms / 1000)
                    else:  # a line's end: the typist waits for the suggestion
                        answers = await asyncio.gather(*asked, return_exceptions=True)
                        window.append((time.perf_counter() - sent) * 1000)
                        # an error answer is counted; the soak goes on
                        failures += sum(isinstance(a, BaseException) for a in answers)
                        asked = []
                    if keys % args.soak_every == 0 or keys == args.soak:
                        samples.append(_sample(session, keys, window))
                        print(f"  {keys:6d} keys  RSS {samples[-1]['rss_mib']:7.1f} MiB"
                              f"  p50 {samples[-1]['p50_ms']:6.1f} ms"
                              f"  p95 {samples[-1]['p95_ms']:7.1f} ms", flush=True)
                        window = []
                    if keys >= args.soak:
                        break
                answers = await asyncio.gather(*asked, return_exceptions=True)
                failures += sum(isinstance(a, BaseException) for a in answers)
                session.client.text_document_did_close(types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri)))
                if keys >= args.soak:
                    break
            pass_no += 1
        stats = (await session.stats())["totals"]
    finally:
        await session.close()
    summary = _summary(samples, keys, failures, time.perf_counter() - start, stats)
    print(f"soak: {keys} keys in {summary['wall_s']:.0f} s, {failures} failed;"
          f" RSS {summary['rss_first_mib']:.0f} MiB after the first window,"
          f" {summary['rss_last_mib']:.0f} MiB at the end (max {summary['rss_max_mib']:.0f});"
          f" growth after warm-up {summary['rss_growth_mib']:+.1f} MiB", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "soak.json"
    path.write_text(json.dumps({"summary": summary, "samples": samples}, indent=1))
    print(f"raw numbers: {path}")
    return summary


def _sample(session: Session, keys: int, window: list[float]) -> dict[str, Any]:
    ordered = sorted(window)
    return {"keys": keys, "rss_mib": session.rss_bytes() / 2**20,
            "p50_ms": statistics.median(ordered) if ordered else 0.0,
            "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] if ordered else 0.0}


def _summary(samples: list[dict[str, Any]], keys: int, failures: int, wall_s: float,
             stats: dict[str, Any]) -> dict[str, Any]:
    warm = samples[1:] or samples
    return {"keys": keys, "failures": failures, "wall_s": wall_s,
            "rss_first_mib": warm[0]["rss_mib"], "rss_last_mib": warm[-1]["rss_mib"],
            "rss_max_mib": max(s["rss_mib"] for s in warm),
            "rss_growth_mib": warm[-1]["rss_mib"] - warm[0]["rss_mib"],
            "requests": stats.get("requests", 0), "cache_hits": stats.get("cache_hits", 0),
            "kv_used_mib": stats.get("kv_used_bytes", 0) / 2**20}
