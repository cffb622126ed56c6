"""The options every benchmark takes, and the options some share."""

from __future__ import annotations

import argparse
from pathlib import Path

Subcommands = argparse._SubParsersAction
"""Where a benchmark's parser goes (what ``add_subparsers`` returns)."""

def common_options() -> argparse.ArgumentParser:
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


def open_pause(p: argparse.ArgumentParser, what: str, default: float = 2000.0) -> None:
    p.add_argument("--open-pause-ms", type=float, default=default, help=what)


def cold_ms(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--cold-ms", type=int, default=1500, help=what)


def seed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="case selection")
