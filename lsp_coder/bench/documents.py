"""``lsp-coder bench documents``: the event loop's longest block with very large documents,
and what typing costs in a line of a million characters.

One server gets a 5 MB document and a file with a 200,000-character line; each is opened,
edited near its start, middle and end, and completed at those places. After every step the
server's ``lspCoder.health`` command reports the longest time its event loop was blocked since
the step before, as wall time (what the editor feels) and as the loop thread's CPU time (its own
work, whatever the machine's load). The target is 50 ms of wall time.

Then the same server is typed into, a key and a completion at a time: at the end of a line in
the middle of a normal file, and in the middle of a 1,000,000-character line (minified code).
It prints each one's first completion and its median per key, and the ratio (target: 2x).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

from ..client.session import Session

TARGET_MS = 50.0
TARGET_RATIO = 2.0
KEYS = "(x, y"
"""Typed one at a time, each key followed by a completion."""


def _documents() -> dict[str, str]:
    big = "".join(f"def function_{i}(x):\n    return x * {i}\n\n" for i in range(130_000))
    long_line = "data = '" + "ab" * 100_000 + "'\nprint(data)\n"
    return {"5 MB document": big, "200,000-character line": long_line}


def _typing_documents() -> dict[str, tuple[str, int]]:
    """(text, cursor) of a normal file and of a 1,000,000-character line of minified code."""
    normal = "".join(f"def function_{i}(x):\n    return x * {i} + offset_{i}\n\n"
                     for i in range(300))
    cursor = normal.find("\n", len(normal) // 2)
    rng = random.Random(11)
    words = ["var ", "a", "b", "=", "function(", ")", "{", "}", "return ", "+", ";", ",",
             "if(", "else", "0", "1", ".", "x", "e", "n"]
    minified = "".join(rng.choice(words) for _ in range(400_000))[:1_000_000]
    long_line = f"import os\n{minified}\nprint(os)\n"
    return {"normal line": (normal, cursor),
            "1,000,000-character line": (long_line, 10 + len(minified) // 2)}


async def _typing(session: Session, n: int, name: str, text: str, cursor: int) -> dict:
    """Open, complete at ``cursor`` (cold), then type ``KEYS`` with a completion after each."""
    session.open(f"file:///bench/documents/typing{n}.py", text)
    start = time.perf_counter()
    await session.inline(cursor)
    first_ms = (time.perf_counter() - start) * 1000
    per_key = []
    for key in KEYS:
        cursor = session.insert(cursor, key)
        start = time.perf_counter()
        await session.inline(cursor)
        per_key.append((time.perf_counter() - start) * 1000)
    return {"document": name, "first_ms": round(first_ms, 1),
            "per_key_ms": [round(ms, 1) for ms in per_key],
            "median_key_ms": round(statistics.median(per_key), 1)}


async def run_documents(args: argparse.Namespace, options: dict[str, Any]) -> list[dict]:
    """Open, edit and complete in each document; returns one row per step (also printed)."""
    session = Session(options)
    await session.start_loaded("documents")
    rows: list[dict] = []
    try:
        await session.health()  # start the measurement here
        for n, (name, text) in enumerate(_documents().items()):
            session.open(f"file:///bench/documents/{n}.py", text)
            rows.append({"document": name, "step": "open", **await session.health()})
            for where in (0.0, 0.5, 1.0):
                offset = session.text.rfind("\n", 0, int(where * (len(session.text) - 1))) + 1
                offset = session.insert(offset, "x")
                rows.append({"document": name, "step": f"edit at {where:.0%}",
                             **await session.health()})
                await session.inline(offset)
                rows.append({"document": name, "step": f"complete at {where:.0%}",
                             **await session.health()})
        typing = [await _typing(session, n, name, text, cursor)
                  for n, (name, (text, cursor)) in enumerate(_typing_documents().items())]
    finally:
        await session.close()
    print(f"{'document':<24} {'step':<16} {'loop block (wall) ms':>21} {'loop CPU ms':>12}")
    for row in rows:
        print(f"{row['document']:<24} {row['step']:<16} {row.get('loop_block_max_ms', 0):>21.1f}"
              f" {row.get('loop_busy_max_ms', 0):>12.1f}")
    worst = max((r.get("loop_block_max_ms", 0.0) for r in rows), default=0.0)
    print(f"longest block: {worst:.1f} ms wall (target {TARGET_MS:.0f} ms)")
    print(f"\n{'typing in':<26} {'first completion ms':>20} {'median per key ms':>18}")
    for row in typing:
        print(f"{row['document']:<26} {row['first_ms']:>20.0f} {row['median_key_ms']:>18.0f}")
    normal, long_line = typing
    ratio = long_line["median_key_ms"] / max(normal["median_key_ms"], 1e-3)
    print(f"long line per key: {ratio:.2f}x a normal line's (target {TARGET_RATIO:.0f}x)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "documents.json").write_text(json.dumps(rows, indent=1))
    (args.out / "documents-typing.json").write_text(json.dumps(
        {"rows": typing, "ratio": round(ratio, 2)}, indent=1))
    return rows
