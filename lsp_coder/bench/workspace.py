"""``lsp-coder bench workspace``: a workspace of thousands of files indexed while the user types.

The workspace is the folder given, or ``--workspace-files`` real source files: the standard
library's own Python files copied round-robin into numbered packages. Two servers load the same
model and get the same keys typed into the same document, a completion awaited after each:

- ``no workspace``: the folder is never named (the baseline);
- ``workspace``: once the model has loaded, the folder is added as a workspace folder
  (``workspace/didChangeWorkspaceFolders``), so its index is built while the keys are typed.

Printed: the index's build time, files and definitions (``lspCoder.stats``); the server's
resident memory after the keys in each run and the parsing subprocess's peak; per-key latency
of the keys typed while the index was building against the same keys without a workspace
(keys that reached the model in both runs; the others come from the suggestion cache); the
event loop's longest block in each run (``lspCoder.health``). Targets: at most about 100 MB more
memory for 5,000 files, and no key waiting on the index.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..client.session import Session, process_rss_bytes

MEMORY_TARGET_MB = 100.0
KEYS = "k7 = decoder.raw_decode(text, index + 3)\n    q2 = k7[0] * 9 - w4\n    z5 = q2 + k7[1]"
"""Typed one at a time into the document, each key followed by a completion (odd names and
numbers, so that many keys miss the suggestion and reach the model)."""
DOCUMENT = "import json\n\n\ndef parse(text, index):\n    decoder = json.JSONDecoder()\n    "
"""The document typed into (a file of the workspace)."""
SAMPLE_S = 0.1
"""How often the processes' memory is sampled."""


def build_workspace(root: Path, count: int) -> int:
    """``count`` source files under ``root``: the standard library's Python files, copied
    round-robin into packages ``pkg_0000``, ``pkg_0001``, ...; returns how many were written."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources = sorted(p for p in stdlib.rglob("*.py")
                     if "site-packages" not in p.parts and p.is_file())
    if not sources:
        raise SystemExit(f"no Python files under {stdlib} to build a workspace from")
    written = 0
    for n in range(count):
        source = sources[n % len(sources)]
        folder = root / f"pkg_{n // len(sources):04d}" / source.parent.relative_to(stdlib)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(source, folder / source.name)
        except OSError:
            continue
        written += 1
    return written


def _rss_tree_bytes(pid: int | None) -> tuple[int, int]:
    """Resident bytes of the process ``pid`` and of all its descendants together."""
    if pid is None:
        return 0, 0
    own = process_rss_bytes(pid)
    children = 0
    stack = [pid]
    while stack:
        parent = stack.pop()
        for child in _children(parent):
            children += process_rss_bytes(child)
            stack.append(child)
    return own, children


def _children(pid: int) -> list[int]:
    """The child processes of ``pid``, started by any of its threads."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += map(int, (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return out


INDEX_WAIT_S = 600.0
"""How long the index may take to be ready after the keys before the bench gives up on it."""


def _index_of(stats: dict[str, Any]) -> dict[str, Any]:
    """The workspace index's figures in ``lspCoder.stats`` ({} when there is no index)."""
    return stats["totals"].get("workspace_index") or {}


async def _run(options: dict[str, Any], folder: Path, with_workspace: bool) -> dict[str, Any]:
    """One server: load, maybe add ``folder`` as the workspace, type ``KEYS``."""
    session = Session(options)
    name = "workspace" if with_workspace else "no workspace"
    await session.start_loaded(name)
    peak_children = 0
    sampling = True

    async def sample() -> None:
        nonlocal peak_children
        while sampling:
            peak_children = max(peak_children, _rss_tree_bytes(session.pid)[1])
            await asyncio.sleep(SAMPLE_S)

    sampler = asyncio.create_task(sample())
    try:
        rss_loaded = _rss_tree_bytes(session.pid)[0]
        await session.health()  # the measurement starts here
        started = time.perf_counter()
        if with_workspace:
            session.client.workspace_did_change_workspace_folders(
                types.DidChangeWorkspaceFoldersParams(event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
                    removed=[])))
        session.open((folder / "typing_here.py").as_uri(), DOCUMENT)
        cursor = len(DOCUMENT)
        keys: list[dict[str, Any]] = []
        for key in KEYS:
            cursor = session.insert(cursor, key)
            sent = time.perf_counter()
            await session.inline(cursor)
            ms = (time.perf_counter() - sent) * 1000
            stats = await session.stats()
            recent = stats["recent"][-1] if stats["recent"] else {}
            building = with_workspace and not _index_of(stats).get("ready")
            keys.append({"ms": ms, "while_indexing": building,
                         "reached_model": not recent.get("cached", True)})
        block_ms = float((await session.health()).get("loop_block_max_ms", 0.0))
        index: dict[str, Any] = {}
        if with_workspace:
            deadline = time.perf_counter() + INDEX_WAIT_S
            while not (index := _index_of(await session.stats())).get("ready"):
                if not index or time.perf_counter() > deadline:
                    print("the workspace index did not get ready (is [context] workspace"
                          " off?)", flush=True)
                    break
                await asyncio.sleep(0.2)
        ready_s = time.perf_counter() - started
        rss_after = _rss_tree_bytes(session.pid)[0]
    finally:
        sampling = False
        await sampler
        await session.close()
    return {"run": name, "keys": keys, "loop_block_max_ms": block_ms, "index": index,
            "index_ready_s": ready_s if with_workspace else 0.0,
            "rss_loaded_mb": rss_loaded / 1e6, "rss_after_mb": rss_after / 1e6,
            "children_peak_mb": peak_children / 1e6}


def _p50(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


async def run_workspace(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    """Build or take the workspace, run both servers, print and write the figures."""
    with tempfile.TemporaryDirectory(prefix="lsp-coder-workspace-") as tmp:
        if args.files:
            folder = args.files[0].resolve()
            written = sum(1 for p in folder.rglob("*") if p.is_file())
        else:
            folder = Path(tmp) / "workspace"
            written = build_workspace(folder, args.workspace_files)
        print(f"workspace: {folder} ({written} files)", flush=True)
        base = await _run(options, folder, with_workspace=False)
        loaded = await _run(options, folder, with_workspace=True)
    index = loaded["index"]
    # Keys that reached the model in both runs (the others were answered from the suggestion
    # cache in a few ms, whatever the index does).
    pairs = [(b, k) for b, k in zip(base["keys"], loaded["keys"])
             if b["reached_model"] and k["reached_model"]]
    during = [k["ms"] for _, k in pairs if k["while_indexing"]]
    same_keys = [b["ms"] for b, k in pairs if k["while_indexing"]]
    after = [k["ms"] for _, k in pairs if not k["while_indexing"]]
    summary = {
        "files": written,
        "indexed_files": index.get("files", 0),
        "definitions": index.get("definitions", 0),
        "index_build_ms": index.get("build_ms", 0.0),
        "rss_no_workspace_mb": base["rss_after_mb"],
        "rss_workspace_mb": loaded["rss_after_mb"],
        "rss_added_mb": loaded["rss_after_mb"] - base["rss_after_mb"],
        "parsing_subprocess_peak_mb": loaded["children_peak_mb"],
        "keys_while_indexing": len(during),
        "key_p50_while_indexing_ms": _p50(during),
        "same_keys_p50_no_workspace_ms": _p50(same_keys),
        "key_p50_after_index_ms": _p50(after),
        "loop_block_max_ms": {"no workspace": base["loop_block_max_ms"],
                              "workspace": loaded["loop_block_max_ms"]},
    }
    print(f"index: {summary['indexed_files']} of {written} files, {summary['definitions']}"
          f" definitions, built in {summary['index_build_ms'] / 1000:.1f} s")
    print(f"server memory after the keys: {summary['rss_no_workspace_mb']:.0f} MB without the"
          f" workspace, {summary['rss_workspace_mb']:.0f} MB with it"
          f" ({summary['rss_added_mb']:+.1f} MB; target at most {MEMORY_TARGET_MB:.0f} MB);"
          f" parsing subprocess peak {summary['parsing_subprocess_peak_mb']:.0f} MB")
    print(f"keys that reached the model while indexing: {len(during)}, p50"
          f" {summary['key_p50_while_indexing_ms']:.0f} ms; the same keys without a workspace"
          f" p50 {summary['same_keys_p50_no_workspace_ms']:.0f} ms; after the index was built:"
          f" {len(after)} keys, p50 {summary['key_p50_after_index_ms']:.0f} ms")
    print(f"event loop's longest block: {base['loop_block_max_ms']:.0f} ms without,"
          f" {loaded['loop_block_max_ms']:.0f} ms with the workspace")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "workspace.json").write_text(json.dumps(
        {"summary": summary, "runs": [base, loaded]}, indent=1))
    return summary
