"""``lsp-coder bench BENCHMARK``: every benchmark's arguments, and the module that runs it.

Only argparse here: a benchmark's modules are imported when it runs, never when an editor starts
the server.
"""

from __future__ import annotations

import argparse

from .common import common_options
from .crossfile import add_crossfile, add_first
from .editors import add_editors, add_team
from .keystrokes import add_idle, add_reuse, add_typing
from .prompt_formats import add_fim, add_floor
from .stress import add_burst, add_documents, add_soak, add_workspace


def add_bench_commands(bench: argparse.ArgumentParser) -> None:
    """The benchmarks as subcommands of ``bench``, each with the options it reads."""
    sub = bench.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    common = common_options()
    for add in (add_typing, add_idle, add_reuse, add_team, add_editors, add_crossfile,
                add_first, add_floor, add_soak, add_burst, add_documents, add_workspace, add_fim):
        add(sub, common)
