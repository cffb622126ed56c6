"""``lsp-coder bench crossfile --recent-edits``: does the record of recent edits carry an
edit to the next file the user edits?

Cases and edits are ``recent_edit_cases``': a line calling a function of another module, the
function renamed (``--edit rename``) or given a new required parameter (``--edit parameter``,
or ``parameter-local`` named after a name the caller has: ``crossfile_names.EDITS``).
Per case and run, with a fresh workspace and server: the defining module is opened and the
edit typed where the function is defined, as a user types it (one ``didChange`` per key, the
module not saved); then ``--tabs`` other modules open, then the case's file; after
``--open-pause-ms`` one inline completion is asked at the blanked line, whose answer is the
line as the edit makes it (with ``--after-dot``: the line typed up to the module's dot, the
rest of it the answer, so only the name and its arguments are asked). Two runs, the same
cases: ``context.recent_edits`` off and on, both with the full prompt
(``idle.cold_prompt_ms = 0``: the context's effect, not the cold prompt's). It prints exact
first lines, edit similarity and the share naming the new name (for a new parameter: a call
of the function that passes it). Where the new argument may go by place or by keyword, either
line is right (``EditCase.alternatives``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..client.session import Session
from .crossfile_ask import tabs_for, timed_inline
from .crossfile_cases import (
    CrossCase,
    Source,
    after_module_dot,
    make_workspace,
    resolve_source,
    select,
    source_cases,
)
from .crossfile_names import HELD_OUT_PACKAGES
from .crossfile_report import Answer, answered, summarize, table
from .crossfile_sources import files
from .recent_edit_cases import EditCase, Site, fitting, passes, renamed, with_parameter
from .scoring import edit_similarity, exact, uses_name

RUNS = {"without": False, "with": True}
"""Run name -> ``context.recent_edits``."""


async def ask(edit: EditCase, source: Source, tabs: list[str], options: dict[str, Any],
              pause_ms: float, index: int, server_log: Path | None = None) -> Answer:
    """One case in one run (see the module docstring)."""
    case = edit.case
    with tempfile.TemporaryDirectory(prefix="lsp-coder-edits-") as tmp:
        root = Path(tmp)
        target = make_workspace(source, case, root)
        session = Session(options, root=root, server_log=server_log)
        await session.start_loaded(f"case {index}")
        try:
            defining = root / case.defined_in
            session.open(defining.as_uri(), defining.read_text(encoding="utf-8"))
            cursor = edit.at
            for char in edit.typed:
                cursor = session.insert(cursor, char)
            for tab in tabs:
                if tab != case.defined_in:
                    path = root / tab
                    session.open(path.as_uri(), path.read_text(encoding="utf-8"))
            session.open(target.as_uri(), case.text)
            suggestion, latency, recent = await timed_inline(session, case.offset, pause_ms)
        finally:
            await session.close()
    right = (edit.expected, *edit.alternatives)
    return answered(index, suggestion, latency, recent,
                    exact=any(exact(suggestion, line) for line in right),
                    edit_similarity=max(edit_similarity(suggestion, line) for line in right),
                    uses_name=(passes(suggestion, case.name, edit.new_name) if edit.passed
                               else uses_name(suggestion, edit.new_name)))


def edited(edit: str, case: CrossCase, site: Site, index: int) -> EditCase | None:
    """The ``index``-th chosen ``case`` with its ``edit`` (``crossfile_names.EDITS``) at its
    ``site``; None for a parameter ``with_parameter`` does not accept."""
    if edit == "rename":
        return renamed(case, site.name_end, index)
    return with_parameter(case, site, index, local=edit == "parameter-local")


async def run_recent_edits(args: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    names = [str(f) for f in args.files] or list(HELD_OUT_PACKAGES)
    sources = {name: resolve_source(name) for name in names}
    edit = args.edit
    fit: dict[tuple[str, str, int], Site] = {}
    pool = []
    for source in sources.values():
        for case, site in fitting(source, source_cases(source)):
            if args.after_dot:
                case = after_module_dot(case)
                if case is None:
                    continue
            if edited(edit, case, site, 0) is None:
                continue
            fit[(case.source, case.path, case.line)] = site
            pool.append(case)
    count = 30 if args.cases is None else args.cases
    chosen = select(pool, count, args.seed, args.per_file)
    cases = []
    for i, case in enumerate(chosen):
        made = edited(edit, case, fit[(case.source, case.path, case.line)], i)
        assert made is not None  # the pool holds only cases it accepts, at any index
        cases.append(made)
    modules = {name: files(s) for name, s in sources.items()}
    tabs = [[] if args.alone else tabs_for(r.case, modules[r.case.source], args.tabs, args.seed)
            for r in cases]
    plans = {}
    for run, on in RUNS.items():
        options = {section: dict(values) for section, values in base.items()}
        options.setdefault("context", {})["recent_edits"] = on
        options.setdefault("idle", {})["cold_prompt_ms"] = 0
        plans[run] = options
    print(f"bench crossfile --recent-edits: {len(cases)} of {len(pool)} {edit} cases from"
          f" {', '.join(names)}; runs: {', '.join(plans)}", flush=True)
    answers: dict[str, list[Answer]] = {run: [] for run in plans}
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "recent_edits.json"
    for i, case in enumerate(cases):
        for run, options in plans.items():
            answer = await ask(case, sources[case.case.source], tabs[i], options,
                               args.open_pause_ms, i, args.server_log)
            answers[run].append(answer)
            print(f"  {i + 1}/{len(cases)} {run}: {case.case.path}:{case.case.line + 1}"
                  f" {'=' if answer.exact else 'x'} {answer.latency_ms:.0f} ms", flush=True)
        out.write_text(json.dumps({
            "sources": names, "seed": args.seed, "edit": edit,
            "cases": [{**asdict(replace(c.case, text="")), "new_name": c.new_name,
                       "typed": c.typed, "expected_edited": c.expected,
                       "alternatives": list(c.alternatives)}
                      for c in cases[: i + 1]],
            "answers": {run: [asdict(a) for a in got] for run, got in answers.items()},
        }, indent=1))
    summaries = {run: summarize(got) for run, got in answers.items()}
    print()
    print(table(summaries))
    print(f"raw numbers: {out}")
    return summaries
