"""``bench team`` and ``bench editors``: several editors at once, on one serving engine or one
shared server."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import Subcommands


def add_team(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench team`` to ``sub``."""
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


def add_editors(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench editors`` to ``sub``."""
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


def _team_files(args: argparse.Namespace) -> list[Path]:
    """FILES, else the standard library's ``TEAM_FILES`` found on this machine."""
    from ...client.trace import default_files
    from ..team import TEAM_FILES

    stdlib = default_files()[0].parent if default_files() else None
    return args.files or [stdlib / name for name in TEAM_FILES
                          if stdlib is not None and (stdlib / name).is_file()]


def _team(args: argparse.Namespace) -> int:
    from ..team import team_main

    return team_main(args, _team_files(args))


def _editors(args: argparse.Namespace) -> int:
    import asyncio

    from ..editors import bench_editors
    from ..editors_report import report_editors
    from ..options import server_options

    files = _team_files(args)
    counts = [int(n) for n in args.editors.split(",") if n.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    runs = asyncio.run(bench_editors(files, counts, modes, server_options(args), args.lines,
                                     args.key_ms, args.kill, args.out, args.same_file))
    print(report_editors(runs))
    return 0
