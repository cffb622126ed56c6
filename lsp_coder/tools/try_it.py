"""``lsp-coder try``: start the real server over stdio as an editor would (with a model of its own,
not the shared server: it leaves nothing running), and type into it.

It opens a file with a few lines cut out, types those lines back one character at a time
(incremental didChange, an inline completion request per keystroke, not awaited, as editors
do), and prints every non-empty suggestion with its latency, then the server's stats
(``unsure``: answers hidden because the model was unsure of them, ``completion.min_confidence``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from ..client.session import Session
from ..client.trace import cut_lines
from .progress_bar import LoadBar
from .sample import SAMPLE_PY

KEYSTROKE_S = 0.12


async def _run(source: str, uri: str, config: str | None, lines: int) -> int:
    print("starting the server and loading the model...", flush=True)
    with LoadBar() as bar:
        session = Session(config=config, verbose=True, on_progress=bar.update)
        totals = await session.start()
    session.on_progress = None
    if not totals.get("model_loaded"):
        print("the model did not load; see the server's message above", file=sys.stderr)
        await session.close()
        return 1
    text, typed, offset = cut_lines(source, lines, at=2 / 3)
    session.open(uri, text)
    print(f"typing {len(typed)} characters into {uri} (a request per keystroke)\n", flush=True)
    tasks: list[asyncio.Task] = []
    shown = 0

    async def ask(at_offset: int, sent: float, typed_so_far: str) -> None:
        nonlocal shown
        suggestion = await session.inline(at_offset)
        ms = (time.perf_counter() - sent) * 1000
        if suggestion:
            shown += 1
            print(f"{ms:8.0f} ms  after {typed_so_far!r:<26} → {_show(suggestion)!r}", flush=True)

    for i, ch in enumerate(typed):
        offset = session.insert(offset, ch)
        typed_so_far = typed[: i + 1].replace("\n", "⏎")[-24:]
        tasks.append(asyncio.ensure_future(ask(offset, time.perf_counter(), typed_so_far)))
        if ch == "\n" or i == len(typed) - 1:
            await asyncio.gather(*tasks)
            tasks.clear()
        else:
            await asyncio.sleep(KEYSTROKE_S)
    totals = (await session.stats())["totals"]
    print(f"\n{shown} suggestions shown; server totals: requests={totals.get('requests')}"
          f" cache_hits={totals.get('cache_hits')} superseded={totals.get('superseded')}"
          f" unsure={totals.get('unsure')}"
          f" reused_tokens={totals.get('reused_tokens')}"
          f" evaluated_tokens={totals.get('evaluated_tokens')}")
    await session.close()
    return 0


def _show(suggestion: str) -> str:
    return suggestion.replace("\n", "⏎")[:70]


def try_server(file: str | None, config: str | None, lines: int = 3) -> int:
    if file:
        path = Path(file).resolve()
        source = path.read_text(encoding="utf-8")
        uri = path.as_uri()
    else:
        source, uri = SAMPLE_PY, "file:///tmp/lsp-coder-sample.py"
    return asyncio.run(_run(source, uri, config, lines))
