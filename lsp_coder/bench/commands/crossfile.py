"""``bench crossfile`` and ``bench first``: lines that use a name from a sibling module, with
the ``[context]`` sources compared, and the first answer in a long file just opened."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..crossfile_names import CROSSFILE_SOURCES, EDITS, HELD_OUT_PACKAGES
from .common import Subcommands, cold_ms, open_pause, seed


def add_crossfile(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench crossfile`` to ``sub``."""
    p = sub.add_parser("crossfile", parents=[common], help="lines that use a name from a"
                       " sibling module of the packages or folders given as FILES (npm:NAME for"
                       " an npm package; default: the report side of the split, Python: "
                       + " ".join(HELD_OUT_PACKAGES) + ") and compare the [context] sources")
    p.add_argument("--cases", type=int, default=None,
                   help="how many cases (default 30; with --cases-from, all of that run's)")
    seed(p)
    p.add_argument("--per-file", type=int, default=2, help="at most this many cases from one"
                   " file")
    p.add_argument("--cases-from", type=Path, nargs="+", default=None, metavar="JSON",
                   help="the cases of an earlier run's crossfile.json, in its order (its"
                        " packages unless FILES are given, its --recipe and --first-use; pass"
                        " its --alone again): compares a change without drawing or filtering"
                        " anew; several (other seeds): their cases in turn, a case drawn again"
                        " once, as --summarize pools them (the first one's seed draws the"
                        " tabs); a JSON of cases without answers (made by hand) gives all of"
                        " them; FILES go before this option")
    p.add_argument("--resume", type=Path, default=None, metavar="JSON",
                   help="go on with a stopped run: the cases its crossfile.json finished keep"
                        " their answers, the rest are asked (its packages, seed, --recipe and"
                        " --first-use; pass its other flags again)")
    p.add_argument("--first-use", action="store_true",
                   help="only the first line of a file that uses a name (the file never shows"
                        " how it is called)")
    p.add_argument("--recipe", default=None,
                   choices=("blank", "after-dot", "cceval", "import", "import-path"),
                   help="blank: the line blanked, the cursor after its indentation (default;"
                        " with --cases-from, that run's recipe);"
                        " after-dot: only lines that reach the name through its module"
                        " (other.name), typed up to the dot; cceval: CrossCodeEval's, the line"
                        " typed up to its first cross-file name, the rest of it the answer;"
                        " import: the one-line 'from X import ...' that imports the name,"
                        " typed up to 'import', its list the answer (JavaScript, TypeScript:"
                        " the import from a relative path, typed up to its ./ or ../);"
                        " import-path: in Python a relative 'from .mod import ...' typed up"
                        " to its dots, or one from the file's own top package typed up to"
                        " 'from top.', the rest of the line the answer (JavaScript,"
                        " TypeScript: as import)")
    p.add_argument("--after-dot", action="store_true", help="the same as --recipe after-dot")
    p.add_argument("--languages", type=_languages,
                   help="comma-separated among python (the default), js (JavaScript and"
                        " TypeScript of the npm packages found on the machine) and ts"
                        " (TypeScript alone): where the cases come from without FILES, and"
                        " which of FILES' cases are drawn; --cases is per language family")
    p.add_argument("--split", choices=("report", "tune"), default="report",
                   help="without FILES, the packages reported on (default) or those to tune"
                        " on: tune on some packages, report on others"
                        " (see docs/benchmarks/crossfile-field.md)")
    p.add_argument("--summarize", type=Path, nargs="+", default=None, metavar="JSON",
                   help="print the tables of an earlier run's crossfile.json (one stopped"
                        " early: the cases every run answered) and run nothing; several"
                        " (other seeds): their cases pooled, a case drawn again counted once")
    p.add_argument("--missed-by", type=Path, default=None, metavar="JSON",
                   help="with --summarize: only the cases this run missed (a run of a small"
                        " model with the file alone on the same cases: --cases-from, --alone,"
                        " --sources in-file+full), the filter below applied to runs made"
                        " without it")
    p.add_argument("--filter-model", default="", metavar="GGUF",
                   help="keep only cases this model (draft: the embedded draft) does not get"
                        " exactly with the file alone and the full prompt, as CrossCodeEval"
                        " filters with a small model other than those it scores")
    p.add_argument("--tabs", type=int, default=2,
                   help="other modules open besides the defining one")
    p.add_argument("--alone", action="store_true",
                   help="open only the case's file (no tabs, not even the defining module):"
                        " what the workspace and the files near it give on their own")
    p.add_argument("--sources", default=",".join(("in-file", *CROSSFILE_SOURCES, "all")),
                   help="comma-separated runs among in-file, " + ", ".join(CROSSFILE_SOURCES)
                        + ", all; NAME+full: also idle.cold_prompt_ms=0; NAME+coldN: also"
                        " idle.cold_context_tokens=N; NAME+first: also"
                        " idle.cold_context_first=true; NAME+imports,"
                        " NAME+noimports: also context.imports=true or false; NAME+recentN:"
                        " also completion.recent_lines=N; NAME+oracle: also the true"
                        " definition of the line's name pinned first in the section, on top"
                        " of what NAME ships; NAME+last: also context.relevant_last=true;"
                        " NAME+second: also context.second_pass=true;"
                        " NAME+visited: also context.visited_ranges=true;"
                        " NAME+unused, NAME+nounused: also context.unused_imports=true or"
                        " false; NAME+members, NAME+nomembers: also"
                        " context.known_members=true or false (in-file: false)"
                        " (they combine: in-file+full+imports)")
    open_pause(p, "time between opening the files and the request")
    p.add_argument("--visit", action="store_true",
                   help="before the case's file, the client opens the module defining the"
                        " line's name (last) and rests the cursor on its definition, as after a"
                        " go-to-definition and back, in every run (NAME+visited runs show the"
                        " visited range)")
    p.add_argument("--highlight", action="store_true",
                   help="ask for the highlights at the cursor right after opening the case's"
                        " file, as VS Code does where the cursor rests (idle work then reads"
                        " the prompt there during the pause)")
    cold_ms(p, "idle.cold_prompt_ms of every run (0: always the full prompt)")
    p.add_argument("--recent-edits", action="store_true",
                   help="the recent-edits recipe instead: a function renamed in its module as"
                        " a user types it, then a line calling it in another file completed;"
                        " context.recent_edits off against on (bench/recent_edits.py)")
    p.add_argument("--edit", choices=EDITS, default="rename",
                   help="with --recent-edits, the edit typed in the function's module:"
                        " rename (a suffix on its name, default), parameter (a new required"
                        " parameter last in its signature; the line then passes it as"
                        " NAME=NAME) or parameter-local (the same, named after a name the"
                        " calling function has bound above the line)")
    p.set_defaults(func=_crossfile)


def add_first(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench first`` to ``sub``."""
    p = sub.add_parser("first", parents=[common], help="the first answer in a long file opened"
                       " N seconds before (crossfile's lines of the packages or folders given as"
                       " FILES, default: " + " ".join(HELD_OUT_PACKAGES) + "), against the"
                       " full prompt on the same lines")
    p.add_argument("--cases", type=int, default=30, help="how many cases")
    seed(p)
    p.add_argument("--per-file", type=int, default=2, help="at most this many cases from one"
                   " file")
    p.add_argument("--pauses", default="0,1,3,6",
                   help="comma-separated seconds between opening the files and the request,"
                        " a run each with the default settings")
    p.add_argument("--min-prefix-chars", type=int, default=6000,
                   help="only lines with at least this much text before the cursor")
    p.add_argument("--tabs", type=int, default=2,
                   help="other modules open besides the defining one")
    p.add_argument("--highlight", action="store_true",
                   help="report the cursor when the file opens (as VS Code does where the"
                        " cursor rests)")
    p.add_argument("--variant", action="append", default=[],
                   metavar="SECTION.KEY=VALUE[,...]",
                   help="also runs with these settings after each pause (repeat for more)")
    cold_ms(p, "idle.cold_prompt_ms of the default runs (the reference always uses 0)")
    p.set_defaults(func=_first)


def _languages(text: str) -> set[str]:
    """``--languages``: the languages of the cases it draws (``case_languages``)."""
    from ..crossfile_sources import case_languages

    try:
        return case_languages(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _crossfile(args: argparse.Namespace) -> int:
    import asyncio

    if args.missed_by is not None and args.summarize is None:
        print("bench crossfile: --missed-by filters the runs --summarize reads", file=sys.stderr)
        return 2
    if args.summarize is not None:
        import json

        from ..crossfile_confidence import confidence_tables
        from ..crossfile_draw import missed_by, pooled
        from ..crossfile_report import answers_of, report_tables

        raws = [json.loads(path.read_text()) for path in args.summarize]
        raw, said, kept = raws[0], "", ""
        try:
            if len(raws) > 1:
                raw, said = pooled(raws)
            if args.missed_by is not None:
                raw, kept = missed_by(raw, json.loads(args.missed_by.read_text()))
        except ValueError as exc:
            print(f"bench crossfile: {exc}", file=sys.stderr)
            return 2
        languages, answers = answers_of(raw)
        tables = (said, kept, report_tables(languages, answers), confidence_tables(answers))
        print("\n\n".join(part for part in tables if part))
        return 0
    from ..crossfile import run_crossfile
    from ..options import SCORED_LINE, server_options

    if args.filter_model == "draft":
        from ...model_files import DEFAULT_DRAFT, ensure_embedded

        args.filter_model = str(ensure_embedded(DEFAULT_DRAFT))
    # One line is scored: stop there. The product's short prompt for a cold cache.
    options = server_options(args, completion=SCORED_LINE,
                             idle={"cold_prompt_ms": args.cold_ms})
    if args.recent_edits:
        from ..recent_edits import run_recent_edits

        asyncio.run(run_recent_edits(args, options))
        return 0
    asyncio.run(run_crossfile(args, options))
    return 0


def _first(args: argparse.Namespace) -> int:
    import asyncio

    from ..first_answers import run_first
    from ..options import SCORED_LINE, server_options

    options = server_options(args, completion=SCORED_LINE,
                             idle={"cold_prompt_ms": args.cold_ms})
    asyncio.run(run_first(args, options))
    return 0
