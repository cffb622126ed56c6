"""``lsp-coder bench burst``: a burst of keys in a file just opened, the client cancelling each
inline request at the next key as VS Code does (``$/cancelRequest``; ``--no-cancel``: it leaves
them to be superseded, as Neovim's plugins do), with the product's debounce and time box.

Per file: the file opens (``--open-pause-ms``), then the first ``--chars`` characters of a line
cut from it (``client.trace.make_trace``) are typed a key every ``--key-ms``, each asking for an
inline completion; printed are the time from the last key to its answer and the prompt tokens
the server's requests read (a request stopped in its prompt's read reads it again when the
server throws that read away).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..client.session import Session
from ..client.trace import default_files, make_trace


async def run_burst(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    """Type a burst in each file; returns the rows and their summary (also printed)."""
    session = Session(options, server_log=args.server_log)
    await session.start_loaded("burst")
    rows: list[dict[str, Any]] = []
    try:
        for path in args.files or default_files():
            rows.append(await _burst(session, Path(path), args))
            row = rows[-1]
            print(f"{row['file']:32} last key -> answer {row['answer_ms']:7.0f} ms"
                  f"  {'answered' if row['answered'] else 'empty   '}"
                  f"  prompt tokens read {row['evaluated_tokens']:6d}", flush=True)
    finally:
        await session.close()
    summary = {"files": len(rows),
               "answer_ms_p50": statistics.median(r["answer_ms"] for r in rows) if rows else 0,
               "evaluated_tokens": sum(r["evaluated_tokens"] for r in rows),
               "cancel": not args.no_cancel}
    how = "cancelling" if summary["cancel"] else "not cancelling"
    print(f"burst: {summary['files']} files, {how} at each key: last key -> answer p50"
          f" {summary['answer_ms_p50']:.0f} ms,"
          f" prompt tokens read {summary['evaluated_tokens']}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "burst.json").write_text(json.dumps({"rows": rows, "summary": summary},
                                                    indent=1))
    return summary


async def _burst(session: Session, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    trace = make_trace(path, 1)
    typed = trace.typed.split("\n", 1)[0][: args.chars]
    uri = path.resolve().as_uri()
    before = (await session.stats())["totals"]
    session.open(uri, trace.text, "python" if path.suffix in (".py", ".pyi") else
                 path.suffix.lstrip(".") or "plaintext")
    await asyncio.sleep(args.open_pause_ms / 1000)
    offset = trace.offset
    asked: tuple[str, asyncio.Future] | None = None
    sent = time.perf_counter()
    for ch in typed:
        if asked is not None and not asked[1].done() and not args.no_cancel:
            session.client.protocol.notify(types.CANCEL_REQUEST,
                                           types.CancelParams(id=asked[0]))
        offset = session.insert(offset, ch)
        msg_id = str(uuid.uuid4())
        future = session.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, session.inline_params(offset), msg_id=msg_id)
        future.add_done_callback(_quiet)
        asked, sent = (msg_id, future), time.perf_counter()
        await asyncio.sleep(args.key_ms / 1000)
    answered = False
    if asked is not None:
        result = await asyncio.wait_for(asked[1], timeout=600)
        items = result.items if isinstance(result, types.InlineCompletionList) else result
        answered = bool(items)
    answer_ms = (time.perf_counter() - sent) * 1000
    await _wait_idle(session)
    after = (await session.stats())["totals"]
    session.client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    return {"file": path.name, "keys": len(typed), "answer_ms": round(answer_ms, 1),
            "answered": answered,
            "evaluated_tokens": after["evaluated_tokens"] - before["evaluated_tokens"]}


async def _wait_idle(session: Session, timeout_s: float = 600.0) -> None:
    """Until the engine has no request's work left (a cancelled read that goes on counts)."""
    deadline = time.monotonic() + timeout_s
    while (await session.stats())["totals"].get("busy") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


def _quiet(future: asyncio.Future) -> None:
    """A cancelled request's error is the answer expected: retrieved so it is not logged."""
    if not future.cancelled():
        future.exception()
