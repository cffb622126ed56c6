"""``lsp-coder bench crossfile --recent-edits``: does the record of recent edits carry a
rename to the next file the user edits?

Cases are ``bench crossfile``'s (``crossfile_cases``) whose line calls a function of another
module of the package through that module (``other.name(...)``), where the case's file names
the function nowhere else (so nothing in it shows the new name). Per case and run, with a
fresh workspace and server: the defining module is opened and the function renamed where it is
defined, as a user types it (the cursor after its name, one ``didChange`` per key of a suffix
from ``SUFFIXES``); then ``--tabs`` other modules open, then the case's file; after
``--open-pause-ms`` one inline completion is asked at the blanked line, whose answer is the
line calling the new name (with ``--after-dot``: the line typed up to the module's dot, the
rest of it the answer, so only the name and its arguments are asked). Two runs, the same
cases: ``context.recent_edits`` off and on, both with the full prompt
(``idle.cold_prompt_ms = 0``: the context's effect, not the cold prompt's). It prints exact
first lines, edit similarity and the share naming the new name.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..client.session import Session
from .commands.crossfile import HELD_OUT_PACKAGES
from .crossfile import tabs_for, timed_inline
from .crossfile_cases import (
    CrossCase,
    Source,
    after_module_dot,
    make_workspace,
    resolve_source,
    select,
    source_cases,
)
from .crossfile_report import Answer, summarize, table
from .crossfile_sources import files
from .scoring import edit_similarity, exact, uses_name

SUFFIXES = ("_v2", "_checked", "_impl", "_strict")
"""What a rename appends to the function's name (by the case's place in the list): names the
model cannot guess without seeing the edit."""

RUNS = {"without": False, "with": True}
"""Run name -> ``context.recent_edits``."""


@dataclass(frozen=True, slots=True)
class RenameCase:
    """A cross-file case whose function is renamed in its module before the line is asked."""

    case: CrossCase
    """The blanked line calling the old name (``case.expected``)."""
    new_name: str
    """The function's name after the rename."""
    expected: str
    """The blanked line calling the new name."""
    def_offset: int
    """Where the old name ends in its ``def`` line, in the defining module's text."""


def rename_cases(source: Source, pool: list[CrossCase]) -> list[tuple[CrossCase, int]]:
    """The cases of ``pool`` fit for a rename (see the module docstring), each with the
    offset just after the function's name in its ``def`` line."""
    out = []
    for case in pool:
        name = re.escape(case.name)
        if not re.search(rf"(?<![\w.])[A-Za-z_]\w*\.{name}\(", case.expected):
            continue
        if re.search(rf"(?<!\w){name}(?!\w)", case.text):
            continue  # the file names it elsewhere: the new name would show there
        defining = source.folder / Path(case.defined_in).relative_to(source.place)
        try:
            text = defining.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found = re.search(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+({name})\(", text, re.M)
        if found is not None:
            out.append((case, found.end(1)))
    return out


def renamed(case: CrossCase, def_offset: int, index: int) -> RenameCase:
    suffix = SUFFIXES[index % len(SUFFIXES)]
    new = case.name + suffix
    expected = re.sub(rf"(?:(?<=\.)|^){re.escape(case.name)}(?=\()", new, case.expected,
                      count=1)
    return RenameCase(case, new, expected, def_offset)


async def ask(rename: RenameCase, source: Source, tabs: list[str], options: dict[str, Any],
              pause_ms: float, index: int, server_log: Path | None = None) -> Answer:
    """One case in one run (see the module docstring)."""
    case = rename.case
    with tempfile.TemporaryDirectory(prefix="lsp-coder-edits-") as tmp:
        root = Path(tmp)
        target = make_workspace(source, case, root)
        session = Session(options, root=root, server_log=server_log)
        await session.start_loaded(f"case {index}")
        try:
            defining = root / case.defined_in
            session.open(defining.as_uri(), defining.read_text(encoding="utf-8"))
            cursor = rename.def_offset
            for char in rename.new_name[len(case.name):]:
                cursor = session.insert(cursor, char)
            for tab in tabs:
                if tab != case.defined_in:
                    path = root / tab
                    session.open(path.as_uri(), path.read_text(encoding="utf-8"))
            session.open(target.as_uri(), case.text)
            suggestion, latency, recent = await timed_inline(session, case.offset, pause_ms)
        finally:
            await session.close()
    return Answer(index, suggestion, exact(suggestion, rename.expected),
                  edit_similarity(suggestion, rename.expected),
                  uses_name(suggestion, rename.new_name), latency,
                  recent.get("prompt_tokens", 0), bool(recent.get("short_prompt")))


async def run_recent_edits(args: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    names = [str(f) for f in args.files] or list(HELD_OUT_PACKAGES)
    sources = {name: resolve_source(name) for name in names}
    fit: dict[tuple[str, str, int], int] = {}
    pool = []
    for source in sources.values():
        for case, offset in rename_cases(source, source_cases(source)):
            if args.after_dot:
                case = after_module_dot(case)
                if case is None:
                    continue
            fit[(case.source, case.path, case.line)] = offset
            pool.append(case)
    count = 30 if args.cases is None else args.cases
    chosen = select(pool, count, args.seed, args.per_file)
    cases = [renamed(c, fit[(c.source, c.path, c.line)], i) for i, c in enumerate(chosen)]
    modules = {name: files(s) for name, s in sources.items()}
    tabs = [[] if args.alone else tabs_for(r.case, modules[r.case.source], args.tabs, args.seed)
            for r in cases]
    plans = {}
    for run, on in RUNS.items():
        options = {section: dict(values) for section, values in base.items()}
        options.setdefault("context", {})["recent_edits"] = on
        options.setdefault("idle", {})["cold_prompt_ms"] = 0
        plans[run] = options
    print(f"bench crossfile --recent-edits: {len(cases)} of {len(pool)} rename cases from"
          f" {', '.join(names)}; runs: {', '.join(plans)}", flush=True)
    answers: dict[str, list[Answer]] = {run: [] for run in plans}
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "recent_edits.json"
    for i, rename in enumerate(cases):
        for run, options in plans.items():
            answer = await ask(rename, sources[rename.case.source], tabs[i], options,
                               args.open_pause_ms, i, args.server_log)
            answers[run].append(answer)
            print(f"  {i + 1}/{len(cases)} {run}: {rename.case.path}:{rename.case.line + 1}"
                  f" {'=' if answer.exact else 'x'} {answer.latency_ms:.0f} ms", flush=True)
        out.write_text(json.dumps({
            "sources": names, "seed": args.seed,
            "cases": [{**asdict(replace(r.case, text="")), "new_name": r.new_name,
                       "expected_renamed": r.expected} for r in cases[: i + 1]],
            "answers": {run: [asdict(a) for a in got] for run, got in answers.items()},
        }, indent=1))
    summaries = {run: summarize(got) for run, got in answers.items()}
    print()
    print(table(summaries))
    print(f"raw numbers: {out}")
    return summaries
