"""``lsp-coder bench idle``: typing at a human cadence (``human``) with idle-time prefill off
and on, and the runs its options add (the short prompt for a cold cache, the section's share
of it, hiding unsure answers, idle work a part at a time), in one invocation."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..client.trace import default_files, make_trace
from .human import Cadence, replay_human
from .human_report import report_human, summarize_human
from .options import server_options


async def run_idle_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Human-cadence typing with idle-time prefill off and on, in one invocation."""
    files = args.files or default_files()
    traces = [make_trace(Path(f), args.lines) for f in files]
    cadence = Cadence(args.key_ms, args.line_pause_ms, args.read_ms, args.open_pause_ms,
                      highlight=not args.no_highlight)
    print(f"bench idle: {', '.join(t.path.name for t in traces)};"
          f" {sum(len(t.typed) for t in traces)} characters", flush=True)
    plans = {"idle off": server_options(args, idle={"enabled": False}),
             "idle on": server_options(args, idle={"enabled": True})}
    if args.baseline:  # before this feature: no idle work, the typed line alone after <MID>
        plans = {"baseline": server_options(args, idle={"enabled": False},
                                      completion={"recent_lines": 0}), **plans}
    if args.parts:  # the product's idle work, one part at a time
        plans = {"idle off": plans["idle off"],
                 "prefill": server_options(args, idle={"enabled": True, "prefetch": False}),
                 "idle on": plans["idle on"]}
    if (args.parts or args.cold or args.cold_context is not None or args.cold_context_first
            or args.min_confidence is not None):
        cold = {"enabled": True, "cold_prompt_ms": args.cold_ms}
        if args.cold_tokens:
            cold["cold_prompt_tokens"] = args.cold_tokens
        plans["+cold prompt"] = server_options(args, idle=cold)
        if args.cold_context_first:
            plans["+cold, section first"] = server_options(
                args, idle={**cold, "cold_context_first": True})
        if args.cold_context is not None:
            plans[f"+cold, section {args.cold_context}"] = server_options(
                args, idle={**cold, "cold_context_tokens": args.cold_context})
        if args.min_confidence is not None:
            plans[f"+cold, min_confidence {args.min_confidence:g}"] = server_options(
                args, idle=cold, completion={"min_confidence": args.min_confidence})
    if args.restart:  # just before "idle on": a request restarts the prefetch of its state
        runs = list(plans.items())
        restart = server_options(args, idle={"enabled": True, "take_prefetch": False})
        runs.insert(list(plans).index("idle on"), ("restart", restart))
        plans = dict(runs)
    summaries = {}
    for name, options in plans.items():
        run = await replay_human(name, traces, options, cadence, server_log=args.server_log)
        summaries[name] = summarize_human(run)
    print()
    print(report_human(summaries))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "idle.json").write_text(json.dumps(summaries, indent=1))
    print(f"raw numbers: {args.out / 'idle.json'}")
    return summaries
