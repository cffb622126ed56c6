"""``lsp-coder bench first``: the first answer in a long file just opened, against full prompts.

A user opens a file and, N seconds later, types in a function far down in it: the server has
had N seconds of idle time and then answers cold. Cases are ``bench crossfile``'s lines (a line
inside a function of a held-out package that uses a name from a sibling module, blanked),
kept only where the text before the cursor is long (``--min-prefix-chars``): the files whose
first answer a short prompt for a cold cache cuts. Each case gets a fresh workspace and server
per run, as in crossfile: the client opens the defining module and ``--tabs`` others, then the
case's file, waits N seconds and asks once. The runs are the product's settings after each
pause of ``--pauses`` and, as the reference, the full prompt (``idle.cold_prompt_ms = 0``) with
no pause, on the same lines; it prints exact first lines, edit similarity and latency per run,
each run's exact matches against the reference's, and writes the answers as JSON.
``--variant`` adds runs with other settings after the same pauses: the curve of exact matches
against latency that chooses the defaults.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .crossfile_ask import ask, run_options, tabs_for
from .crossfile_cases import resolve_source, select, source_cases
from .crossfile_confidence import confidence_tables
from .crossfile_names import HELD_OUT_PACKAGES
from .crossfile_report import Answer, summarize, table
from .crossfile_sources import files
from .options import parse_setting

REFERENCE = "full prompt"
"""The reference run's name: ``idle.cold_prompt_ms = 0``, asked with no pause."""


def plans(pauses_s: list[float], base: dict[str, Any],
          variants: list[str] = ()) -> dict[str, tuple[dict, float]]:
    """Each run's initializationOptions and pause (seconds), the reference first: the
    default settings after each pause, then each variant (``SECTION.KEY=VALUE`` settings
    joined by ``,``) after each pause."""
    runs = {REFERENCE: (run_options("all+full", base), 0.0)}
    for variant in ("default", *variants):
        options = run_options("all", base)
        if variant != "default":
            for setting in variant.split(","):
                section, key, value = parse_setting(setting)
                options.setdefault(section, {})[key] = value
        for pause in pauses_s:
            runs[f"{variant}, {pause:g} s"] = (options, pause)
    return runs


def ratio_line(summaries: dict[str, dict[str, float]]) -> str:
    """Each run's exact matches as a share of the reference's."""
    full = summaries[REFERENCE]["exact"]
    parts = [f"{name}: {s['exact'] / full:.2f}x" if full else f"{name}: -"
             for name, s in summaries.items() if name != REFERENCE]
    return "exact against the full prompt's: " + "; ".join(parts)


async def run_first(args: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    names = [str(f) for f in args.files] or list(HELD_OUT_PACKAGES)
    sources = {name: resolve_source(name) for name in names}
    pool = [c for s in sources.values() for c in source_cases(s, False)
            if c.offset >= args.min_prefix_chars]
    cases = select(pool, args.cases, args.seed, args.per_file)
    modules = {name: files(s) for name, s in sources.items()}
    tabs = [tabs_for(c, modules[c.source], args.tabs, args.seed) for c in cases]
    runs = plans([float(p) for p in args.pauses.split(",") if p.strip()], base, args.variant)
    print(f"bench first: {len(cases)} of {len(pool)} long-file cases from {', '.join(names)};"
          f" runs: {', '.join(runs)}", flush=True)
    answers: dict[str, list[Answer]] = {name: [] for name in runs}
    args.out.mkdir(parents=True, exist_ok=True)
    for i, case in enumerate(cases):
        for name, (options, pause_s) in runs.items():
            answer = await ask(case, sources[case.source], tabs[i], options, pause_s * 1000, i,
                               args.server_log, args.highlight)
            answers[name].append(answer)
            print(f"  {i + 1}/{len(cases)} {name}: {case.path}:{case.line + 1}"
                  f" {'=' if answer.exact else 'x'} {answer.latency_ms:.0f} ms", flush=True)
        summaries = {name: summarize(a) for name, a in answers.items()}
        raw = {"sources": names, "seed": args.seed, "highlight": args.highlight,
               "summaries": summaries,
               "cases": [{k: v for k, v in asdict(c).items() if k != "text"}
                         for c in cases[: i + 1]],
               "answers": {name: [asdict(a) for a in run] for name, run in answers.items()}}
        (args.out / "first.json").write_text(json.dumps(raw, indent=1))
    summaries = {name: summarize(a) for name, a in answers.items()}
    print()
    print(table(summaries))
    print(ratio_line(summaries))
    confident = confidence_tables(answers)
    if confident:
        print(f"\n{confident}")
    print(f"raw numbers: {Path(args.out) / 'first.json'}")
    return summaries
