"""``lsp-coder bench crossfile``: does what other files hold make the line right?

Cases come from real packages (see ``crossfile_cases``): a line that uses a name from another
module of the package is blanked (with ``--first-use``, only its first use in the file). Every
case of every run gets a fresh copy of its package as the workspace (``rootUri``), whose copy
of the case's file holds the blanked buffer, so no index can read the answer, and a fresh
server. The client does the same in every run: it opens the module defining the name and
``--tabs`` other modules of the package as tabs (none with ``--alone``), then the case's file,
rests ``--open-pause-ms``, and asks for one inline completion after the blank line's indentation
(``--recipe after-dot``: after the line typed up to the dot of ``module.name``; ``--recipe
cceval``: CrossCodeEval's, after the line typed up to its first cross-file name; ``--recipe
import``: after ``from X import`` of the statement that imports the name, its list the answer;
in JavaScript and TypeScript after the ``./`` of the relative path it imports from; ``--recipe
import-path``: the same, but in Python only a relative ``from .X import``, after its dots, or
one from the file's own top package, after ``from top.``).
Python cases come from installed packages, JavaScript and TypeScript ones from npm packages
found on the machine (``--languages``: ``python``, ``js`` for both, ``ts`` for TypeScript
alone; when given, only cases in those languages are drawn, from FILES too); without FILES,
``--split`` picks the packages reported on or those tuned on (``crossfile_sources``).
With ``--filter-model`` only cases that model gets wrong with the file alone are kept (see
``missed_alone``); ``--cases-from`` takes the cases of an earlier run's JSON instead (the same
lines again, to compare a change of the code without drawing or filtering anew); ``--resume``
keeps a stopped run's answers and goes on from the first case it did not finish.
The runs differ only in the ``[context]`` sources the server may use: none (``in-file``), each
source alone, and all of them; a run name ending in ``+full`` also sets
``idle.cold_prompt_ms = 0`` (always the full prompt), one ending in ``+coldN``
``idle.cold_context_tokens = N`` (how much of the section the short prompt keeps), one ending
in ``+first`` ``idle.cold_context_first = true`` (the first answer waits for the section), one
with ``+imports`` or ``+noimports`` ``context.imports`` on or off, one with ``+recentN``
``completion.recent_lines = N`` (how many lines above the cursor go after the middle token),
one with ``+oracle`` the true definition of the line's name put first in the section on top
of what the run ships (``context.pinned``, its budget raised by the definition's size: what
the right context could do), one with ``+visited`` ``context.visited_ranges = true`` (with
``--visit`` the client first rests the cursor on the name's definition in its module, in every
run, as after a go-to-definition), one with ``+last`` ``context.relevant_last = true`` (the most
relevant code last in the section), one with ``+second`` ``context.second_pass = true`` (a
second pass by the names of the first answer), one with ``+unused`` or ``+nounused``
``context.unused_imports`` on or off, one with ``+members`` or ``+nomembers``
``context.known_members`` on or off (``in-file`` runs have it off: what other files define
is not the file's); they combine (``in-file+full+imports``). Where
a ``NAME+second`` run's second pass did not run, run ``NAME`` is not asked: its one request
is that first pass, the same prompt, answered the same way (greedy decoding), so it takes
that answer.

It prints, per run, the exact first lines, the mean edit similarity, the share of suggestions
that name the used name, and the request's latency and prompt tokens; then per language each
run's exact match, edit similarity, identifier match and share naming the name with 95 %
intervals from a paired bootstrap over the cases, and each run against in-file only; writes
the cases and answers as JSON and a bar chart as PNG.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .crossfile_ask import ask, run_options, tabs_for
from .crossfile_cases import (
    CrossCase,
    Source,
    after_module_dot,
    before_name,
    import_list,
    select,
)
from .crossfile_confidence import confidence_tables
from .crossfile_draw import cases_from, earlier_cases, how_drawn, resumed, select_by_family
from .crossfile_report import Answer, plot, report_tables, summarize
from .crossfile_sources import case_languages, files, resolve, split_sources
from .crossfile_sources import cases as source_cases


async def run_crossfile(args: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    earlier = (earlier_cases([json.loads(path.read_text()) for path in args.cases_from])
               if args.cases_from else None)
    done = json.loads(args.resume.read_text()) if args.resume else None
    languages = args.languages or case_languages("python")
    names = ([str(f) for f in args.files] or (earlier or done or {}).get("sources", [])
             or split_sources(args.split, languages))
    sources = {name: resolve(name) for name in names}
    drawn = how_drawn(args, earlier or done)
    pool = [c for s in sources.values() for c in source_cases(s, drawn["first_use"])
            if args.languages is None or c.language in languages]
    recipe = drawn["recipe"]
    if recipe == "after-dot":
        pool = [typed for c in pool if (typed := after_module_dot(c)) is not None]
    elif recipe == "cceval":
        pool = [before_name(c) for c in pool]
    elif recipe in ("import", "import-path"):
        lists = {(i.path, i.line): i for c in pool
                 if (i := import_list(c, recipe == "import-path")) is not None}
        pool = list(lists.values())  # a statement that imports several names: one case
    count = 30 if args.cases is None else args.cases
    seed = (earlier or done or {}).get("seed", args.seed)
    if earlier is not None:
        cases = cases_from(earlier, pool)[: args.cases]
        kept = f"{len(cases)} cases of {', '.join(map(str, args.cases_from))}" + (
            f" ({earlier['filter']})" if earlier.get("filter") else "")
    elif args.filter_model:
        cases, asked = await missed_alone(select(pool, len(pool), seed, args.per_file),
                                          sources, base, args.filter_model, count)
        kept = f"{len(cases)} of {asked} asked: those {Path(args.filter_model).name} missed alone"
    else:
        cases, kept = select_by_family(pool, count, seed, args.per_file), ""
    modules = {name: files(s) for name, s in sources.items()}
    tabs = [[] if args.alone else tabs_for(c, modules[c.source], args.tabs, seed)
            for c in cases]
    runs = [r.strip() for r in args.sources.split(",") if r.strip()]
    oracles = {name for name in runs if "oracle" in name.split("+")[1:]}
    plans = {name: run_options(name, base) for name in runs}
    print(f"bench crossfile: {len(cases)} of {len(pool)} cases from {_listed(names)}"
          f"{f' ({kept})' if kept else ''}; runs: {', '.join(runs)}", flush=True)
    answers: dict[str, list[Answer]] = {name: [] for name in plans}
    if done is not None:
        answers |= {name: [Answer(**a) for a in run]
                    for name, run in resumed(done, cases, runs).items()}
        print(f"  the first {len(answers[runs[0]])} cases as {args.resume} answered them",
              flush=True)
    start = len(answers[runs[0]]) if runs else 0
    args.out.mkdir(parents=True, exist_ok=True)
    if start:
        _write(args.out / "crossfile.json", names, seed, cases[:start], tabs, answers, kept, drawn)
    # Case by case, every run on each: a run stopped early still compares like with like,
    # and the JSON written after each case holds what is done.
    order = sorted(plans, key=lambda name: not name.endswith("+second"))
    for i, case in enumerate(cases[start:], start):
        for name in order:
            twin = answers.get(f"{name}+second")
            if twin is not None and len(twin) > i and not twin[i].second_pass:
                answer, how = twin[i], f" (as {name}+second: no second pass)"
            else:
                answer = await ask(case, sources[case.source], tabs[i], plans[name],
                                   args.open_pause_ms, i, args.server_log, args.highlight,
                                   name in oracles, args.visit)
                how = " (second pass)" if answer.second_pass else ""
            answers[name].append(answer)
            print(f"  {i + 1}/{len(cases)} {name}: {case.path}:{case.line + 1}"
                  f" {'=' if answer.exact else 'x'} {answer.latency_ms:.0f} ms{how}",
                  flush=True)
        _write(args.out / "crossfile.json", names, seed, cases[: i + 1], tabs, answers,
               kept, drawn)
    summaries = {name: summarize(a) for name, a in answers.items()}
    tables = (report_tables([c.language for c in cases], answers), confidence_tables(answers))
    print()
    print("\n\n".join(part for part in tables if part))
    png = args.out / "crossfile.png"
    if plot(summaries, png):
        print(f"plot: {png}")
    print(f"raw numbers: {args.out / 'crossfile.json'}")
    return summaries


def _listed(names: list[str], shown: int = 12) -> str:
    """The sources' names, the npm packages counted when there are many."""
    npm = [n for n in names if n.startswith("npm:")]
    if len(names) <= shown or not npm:
        return ", ".join(names)
    return ", ".join([n for n in names if not n.startswith("npm:")]
                     + [f"{len(npm)} npm packages ({', '.join(npm[:3])}, ...)"])


async def missed_alone(candidates: list[CrossCase], sources: dict[str, Source],
                       base: dict[str, Any], model: str, count: int
                       ) -> tuple[list[CrossCase], int]:
    """The first ``count`` of ``candidates`` whose line ``model`` (without a draft) does not
    get exactly with the file alone and the full prompt, and how many were asked: the filter
    CrossCodeEval puts after its static one (with a small model other than those it scores),
    so the cases left are those the file does not answer."""
    options = run_options("in-file+full", base)
    options["model"] = {**options["model"], "path": model, "draft_path": "none"}
    kept: list[CrossCase] = []
    asked = 0
    for case in candidates:
        if len(kept) >= count:
            break
        answer = await ask(case, sources[case.source], [], options, 0, asked)
        asked += 1
        if not answer.exact:
            kept.append(case)
        print(f"  filter {asked}: {case.path}:{case.line + 1}"
              f" {'= (left out)' if answer.exact else 'x (kept)'}", flush=True)
    return kept, asked


def _write(path: Path, sources: list[str], seed: int, cases: list[CrossCase],
           tabs: list[list[str]], answers: dict[str, list[Answer]], kept: str,
           drawn: dict[str, Any]) -> None:
    """The cases done so far, their answers and the summaries, as JSON; ``kept``: what the
    filter left (empty without one); ``drawn``: how the cases were made (``recipe``,
    ``first_use``), which ``--cases-from`` takes again."""
    raw = {"sources": sources, "seed": seed, **drawn, "filter": kept,
           "summaries": {name: summarize(run) for name, run in answers.items()},
           "cases": [{k: v for k, v in asdict(c).items() if k != "text"} | {"tabs": t}
                     for c, t in zip(cases, tabs)],
           "answers": {name: [asdict(a) for a in run] for name, run in answers.items()}}
    path.write_text(json.dumps(raw, indent=1))
