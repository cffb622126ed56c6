"""``lsp-coder daemon status|stop``: the user's shared servers, seen and stopped from a shell.

``daemon run`` is what a forwarder starts (not for people): the shared server for one model
key, detached from the editor with ``--detach``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any


def add_daemon_commands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="daemon_command", required=True)
    p = sub.add_parser("status", help="the shared servers running: editors, model, memory,"
                       " uptime")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_status)
    p = sub.add_parser("stop", help="stop every shared server (editors still open start a new"
                       " one when they next need it)")
    p.set_defaults(func=_stop)
    p = sub.add_parser("run", help="serve as the shared server (forwarders start it)")
    p.add_argument("--idle-exit", type=float, default=300.0, metavar="SECONDS",
                   help="exit this long after the last editor left")
    p.add_argument("--detach", action="store_true", help="fork: the command returns at once")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if args.detach and os.fork() > 0:
        os._exit(0)  # the forwarder waits for this; the server goes on in the child
    from ..server.lifecycle import exit_now
    from .daemon import run_shared_server

    exit_now(run_shared_server(args.idle_exit))
    return 0  # not reached


async def _ask_all(query: str) -> list[dict[str, Any]]:
    from .runtime import all_endpoints
    from .spawn import connect

    answers = []
    for endpoint in all_endpoints():
        try:
            link = await asyncio.wait_for(connect(endpoint, {"query": query}), 10.0)
        except (OSError, TimeoutError):
            continue  # left behind by a server that is gone
        link.writer.close()
        answers.append({**link.welcome, "endpoint": endpoint.name})
    return answers


def _status(args: argparse.Namespace) -> int:
    answers = asyncio.run(_ask_all("status"))
    if args.json:
        print(json.dumps(answers, indent=2))
        return 0
    if not answers:
        print("no shared server is running")
        return 0
    for a in answers:
        print(f"pid {a['pid']}: lsp-coder {a['build']}, {a['editors']} editor(s),"
              f" {a['rss_bytes'] / 2**20:.0f} MiB resident, up {a['uptime_s']:.0f} s (exits"
              f" {a['idle_exit_s']:g} s after its last editor)")
        for m in a["models"]:
            state = "loading" if m["loading"] else m["error"] or "ready"
            print(f"  {m['editors']} editor(s) on {m['backend'] or 'a model'}"
                  f" {m['model'] or '(not loaded)'}"
                  + (f" + draft {m['draft']}" if m.get("draft") else "") + f": {state}")
    return 0


def _stop(args: argparse.Namespace) -> int:
    answers = asyncio.run(_ask_all("stop"))
    for a in answers:
        print(f"stopped the shared server {a['pid']} ({a['editors']} editor(s) connected)")
    if not answers:
        print("no shared server is running", file=sys.stderr)
    return 0
