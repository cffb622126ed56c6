"""``bench soak``, ``bench burst``, ``bench documents`` and ``bench workspace``: the server under
load (many keys, a burst of cancelled requests, huge documents, a large workspace)."""

from __future__ import annotations

import argparse

from .common import Subcommands, open_pause


def add_soak(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench soak`` to ``sub``."""
    p = sub.add_parser("soak", parents=[common], help="many keystrokes against one server, RSS"
                       " and latency sampled (a leak check)")
    p.add_argument("--keys", dest="soak", type=int, default=2000, metavar="N",
                   help="keystrokes to type")
    p.add_argument("--every", dest="soak_every", type=int, default=500, metavar="K",
                   help="sample RSS and latency every K keys")
    p.set_defaults(func=_soak)


def add_burst(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench burst`` to ``sub``."""
    p = sub.add_parser("burst", parents=[common], help="a burst of keys in a file just opened,"
                       " the client cancelling each request at the next key as VS Code does:"
                       " time from the last key to its answer, prompt tokens read")
    p.add_argument("--chars", type=int, default=16, help="keys typed in each file")
    p.add_argument("--no-cancel", action="store_true",
                   help="leave stale requests to be superseded (no $/cancelRequest)")
    open_pause(p, "wait after opening a file before the first key")
    p.set_defaults(func=_burst, open_pause_ms=500.0)


def add_documents(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench documents`` to ``sub``."""
    p = sub.add_parser("documents", parents=[common], help="the event loop's longest block while"
                       " a 5 MB document and a 200,000-character line are opened, edited and"
                       " completed, and the cost of a key in a 1,000,000-character line against"
                       " a normal one")
    p.set_defaults(func=_documents)


def add_workspace(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench workspace`` to ``sub``."""
    p = sub.add_parser("workspace", parents=[common], help="a workspace of thousands of files"
                       " (FILES: a folder; default: standard library files copied) indexed"
                       " while keys are typed: index time, memory, keys while indexing")
    p.add_argument("--workspace-files", type=int, default=5000,
                   help="files in the workspace built when no folder is given")
    p.set_defaults(func=_workspace)


def _soak(args: argparse.Namespace) -> int:
    import asyncio

    from ..options import server_options
    from ..soak import run_soak

    # The product's debounce and time box: the soak types like an editor.
    options = {**server_options(args), "completion": {"max_tokens": args.max_tokens}}
    summary = asyncio.run(run_soak(args, options))
    return 1 if summary["failures"] else 0


def _burst(args: argparse.Namespace) -> int:
    import asyncio

    from ..burst import run_burst
    from ..options import server_options

    asyncio.run(run_burst(args, server_options(args, editor=True)))  # types like an editor
    return 0


def _documents(args: argparse.Namespace) -> int:
    import asyncio

    from ..documents import run_documents
    from ..options import server_options

    asyncio.run(run_documents(args, server_options(args)))
    return 0


def _workspace(args: argparse.Namespace) -> int:
    import asyncio

    from ..options import server_options
    from ..workspace import run_workspace

    asyncio.run(run_workspace(args, server_options(args)))
    return 0
