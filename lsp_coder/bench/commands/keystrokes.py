"""``bench typing``, ``bench idle`` and ``bench reuse``: one editor typing files back key by key
(``bench/replay.py``)."""

from __future__ import annotations

import argparse

from .common import Subcommands, cold_ms, open_pause


def add_typing(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench typing`` to ``sub``."""
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


def add_idle(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench idle`` to ``sub``."""
    p = sub.add_parser("idle", parents=[common], help="type at a human cadence with idle-time"
                       " prefill off and on: time to a suggestion after Enter, after accepting,"
                       " in a file just opened and mid-line")
    p.add_argument("--line-pause-ms", type=float, default=1500.0,
                   help="pause at the end of a line before Enter")
    p.add_argument("--read-ms", type=float, default=800.0,
                   help="time spent reading a suggestion, from when it shows, before accepting"
                        " it")
    open_pause(p, "time between opening a file and the first key")
    p.add_argument("--no-highlight", action="store_true",
                   help="the client does not tell the cursor when it opens a file (no"
                        " textDocument/documentHighlight, as Neovim and Helix by default)")
    p.add_argument("--cold", action="store_true",
                   help="also a run with the short prompt for a cold cache")
    cold_ms(p, "idle.cold_prompt_ms of the --cold and --parts run")
    p.add_argument("--cold-tokens", type=int, default=0,
                   help="idle.cold_prompt_tokens of that run (0: the default)")
    p.add_argument("--cold-context", type=int, default=None, metavar="TOKENS",
                   help="also --cold, and a run like it with idle.cold_context_tokens = TOKENS (how"
                        " much of the other files' section the short prompt keeps)")
    p.add_argument("--cold-context-first", action="store_true",
                   help="also --cold, and a run like it with idle.cold_context_first = true"
                        " (the first answers in a file wait for the section)")
    p.add_argument("--min-confidence", type=float, default=None, metavar="P",
                   help="also --cold, and a run like it with completion.min_confidence = P"
                        " (answers to typing whose first line the model is less sure of are"
                        " hidden; 0: none, to see what each threshold would hide)")
    p.add_argument("--parts", action="store_true",
                   help="also a run with idle prefill only (no prefetch), and --cold")
    p.add_argument("--restart", action="store_true",
                   help="also a run where a request stops the prefetch of its own state and"
                        " starts over (idle.take_prefetch = false)")
    p.add_argument("--baseline", action="store_true",
                   help="a first run with completion.recent_lines = 0 and no idle work")
    p.set_defaults(func=_idle)


def add_reuse(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    """Add ``bench reuse`` to ``sub``."""
    p = sub.add_parser("reuse", parents=[common], help="type files back key by key in process,"
                       " every key asking, no idle work, the prefill speed pinned: the prompt"
                       " tokens each key reads (the same on any machine)")
    cold_ms(p, "idle.cold_prompt_ms (0: full prompts only)")
    p.add_argument("--token-ms", type=float, default=10.0,
                   help="the prefill speed, in ms a prompt token, the short prompts are chosen"
                        " by (a 2-core CPU reads the embedded 1.5B at about 10)")
    p.add_argument("--branches", action="store_true",
                   help="after each key at a line's end, read idle work's Enter branch in full"
                        " (as if every pause were long enough), its reads counted apart")
    p.set_defaults(func=_reuse)


def _typing(args: argparse.Namespace) -> int:
    import asyncio

    from ..replay import run_bench

    asyncio.run(run_bench(args))
    return 0


def _idle(args: argparse.Namespace) -> int:
    import asyncio

    from ..idle_bench import run_idle_bench

    asyncio.run(run_idle_bench(args))
    return 0


def _reuse(args: argparse.Namespace) -> int:
    from ..prompt_reuse import run_prompt_reuse

    run_prompt_reuse(args)
    return 0
