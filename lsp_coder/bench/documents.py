"""``lsp-coder bench --documents``: the event loop's longest block with very large documents.

One server gets a 5 MB document and a file with a 200,000-character line; each is opened,
edited near its start, middle and end, and completed at those places. After every step the
server's ``lspCoder.health`` command reports the longest time its event loop was blocked since
the step before, as wall time (what the editor feels) and as the loop thread's CPU time (its own
work, whatever the machine's load). The target is 50 ms of wall time.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from lsprotocol import types

from ..client.session import Session

TARGET_MS = 50.0


def _documents() -> dict[str, str]:
    big = "".join(f"def function_{i}(x):\n    return x * {i}\n\n" for i in range(130_000))
    long_line = "data = '" + "ab" * 100_000 + "'\nprint(data)\n"
    return {"5 MB document": big, "200,000-character line": long_line}


async def _health(session: Session) -> dict[str, float]:
    # A request first: pygls may answer a request that follows a notification before the
    # notification's handler has run, so the notification's cost would land in the next step.
    await session.stats()
    result = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="lspCoder.health"))
    return result if isinstance(result, dict) else {}


async def run_documents(args: argparse.Namespace, options: dict[str, Any]) -> list[dict]:
    """Open, edit and complete in each document; returns one row per step (also printed)."""
    session = Session(options)
    totals = await session.start()
    if not totals.get("model_loaded"):
        await session.close()
        raise RuntimeError(f"documents: the model did not load: {totals.get('error')}")
    rows: list[dict] = []
    try:
        await _health(session)  # start the measurement here
        for n, (name, text) in enumerate(_documents().items()):
            session.open(f"file:///bench/documents/{n}.py", text)
            rows.append({"document": name, "step": "open", **await _health(session)})
            for where in (0.0, 0.5, 1.0):
                offset = session.text.rfind("\n", 0, int(where * (len(session.text) - 1))) + 1
                offset = session.insert(offset, "x")
                rows.append({"document": name, "step": f"edit at {where:.0%}",
                             **await _health(session)})
                await session.inline(offset)
                rows.append({"document": name, "step": f"complete at {where:.0%}",
                             **await _health(session)})
    finally:
        await session.close()
    print(f"{'document':<24} {'step':<16} {'loop block (wall) ms':>21} {'loop CPU ms':>12}")
    for row in rows:
        print(f"{row['document']:<24} {row['step']:<16} {row.get('loop_block_max_ms', 0):>21.1f}"
              f" {row.get('loop_busy_max_ms', 0):>12.1f}")
    worst = max((r.get("loop_block_max_ms", 0.0) for r in rows), default=0.0)
    print(f"longest block: {worst:.1f} ms wall (target {TARGET_MS:.0f} ms)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "documents.json").write_text(json.dumps(rows, indent=1))
    return rows
