"""``lsp-coder bench team --backend URL``: a team of editors on one serving engine.

Each editor is a real lsp-coder server process over stdio, typing a different file at a human
cadence and asking for an inline completion after every key without waiting for the answer (as
an editor does). The typist pauses at the end of each line and after ``(``, ``.``, ``=``, ``:``
and ``,``; the figure that matters is the time from the key before a pause to a suggestion.

Before typing, each editor warms the engine's cache for its file: it asks once at the cursor and
waits for the engine to finish (the time is reported as ``warm_s``), as an editor that has had
the file open for a while would have. Both clients warm up the same way.

The peer is what llama.vim and llama.vscode do against llama-server: on every key, drop the
request in flight (closing its connection) and send a new non-streamed ``/infill`` with their
default settings (256 lines above, 64 below, ``n_predict`` 128, ``t_max_prompt_ms`` 500,
``t_max_predict_ms`` 1000). Their client-side ring of extra chunks and hash cache are left out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ..client.session import Session
from ..client.trace import Trace, make_trace
from .figures import quantile
from .team_report import plot, ratios, table

PAUSE_AFTER = "(.=:,"
TEAM_FILES = ("textwrap.py", "shlex.py", "heapq.py", "bisect.py", "fnmatch.py", "colorsys.py",
              "getopt.py", "glob.py")
"""Standard-library modules: one per editor, real code that is on every machine."""


@dataclass(slots=True)
class EditorResult:
    keys: int = 0
    pauses: int = 0
    shown_at_pause: list[float] = field(default_factory=list)
    """Milliseconds from the key before a pause to a non-empty suggestion, per pause."""
    missed_pauses: int = 0
    empty_at_pause: int = 0
    """Of the missed pauses, those answered within the pause with nothing to show."""
    backend_requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0


@dataclass(slots=True)
class TeamRun:
    name: str
    editors: int
    results: list[EditorResult] = field(default_factory=list)
    wall_s: float = 0.0
    warm_s: float = 0.0
    pause_ms: float = 0.0

    def summary(self) -> dict[str, Any]:
        times = sorted(t for r in self.results for t in r.shown_at_pause)
        keys = sum(r.keys for r in self.results)
        pauses = sum(r.pauses for r in self.results)
        prompt = sum(r.prompt_tokens for r in self.results)
        every_pause = times + [None] * (pauses - len(times))  # None: nothing within the pause
        return {
            "run": self.name, "editors": self.editors, "keys": keys, "pauses": pauses,
            "shown_at_pause": len(times),
            "empty_at_pause": sum(r.empty_at_pause for r in self.results),
            "p50_ms": _ms(quantile(times, 0.5, empty=None)),
            "p95_ms": _ms(quantile(times, 0.95, empty=None)),
            "p50_all_ms": _ms(quantile(every_pause, 0.5, empty=None)),
            "pause_ms": self.pause_ms,
            "requests_per_key": round(sum(r.backend_requests for r in self.results)
                                      / max(keys, 1), 3),
            "cached_fraction": (round(sum(r.cached_tokens for r in self.results) / prompt, 3)
                                if prompt else None),
            "wall_s": round(self.wall_s, 1), "warm_s": round(self.warm_s, 1),
        }


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _traces(files: list[Path], editors: int, lines: int) -> list[Trace]:
    return [make_trace(files[i % len(files)], lines, at=0.5 + 0.05 * (i // len(files)))
            for i in range(editors)]


async def _type(trace: Trace, key_ms: float, pause_ms: float, editor,
                result: EditorResult) -> None:
    """Type ``trace`` into ``editor``, asking after every key without waiting for the answer."""
    offset = trace.offset
    for i, ch in enumerate(trace.typed):
        offset = await editor.insert(offset, ch)
        sent = time.perf_counter()
        task = asyncio.ensure_future(editor.complete(offset))
        result.keys += 1
        nxt = trace.typed[i + 1] if i + 1 < len(trace.typed) else "\n"
        pause = ch in PAUSE_AFTER or nxt == "\n"
        if not pause:
            await asyncio.sleep(key_ms / 1000)
            continue
        result.pauses += 1
        try:
            text = await asyncio.wait_for(asyncio.shield(task), timeout=pause_ms / 1000)
        except TimeoutError:
            text = None
        if text:
            result.shown_at_pause.append((time.perf_counter() - sent) * 1000)
        else:
            result.missed_pauses += 1
            result.empty_at_pause += text is not None
        rest = pause_ms / 1000 - (time.perf_counter() - sent)
        if rest > 0:
            await asyncio.sleep(rest)


class _LspEditor:
    """One editor: an lsp-coder server on the shared engine."""

    def __init__(self, url: str, kind: str, model: str, max_tokens: int) -> None:
        # A cold prompt takes tens of seconds on a CPU engine: the bench waits for it.
        self.session = Session({"backend": {"kind": kind, "url": url, "model": model,
                                            "timeout_ms": 600_000},
                                "completion": {"max_tokens": max_tokens},
                                "context": {"ignore_files": False}})  # as bench/options.py

    async def start(self, trace: Trace) -> None:
        await self.session.start_loaded("lsp-coder on the backend", timeout_s=60)
        self.session.open(trace.uri, trace.text)

    async def insert(self, offset: int, ch: str) -> int:
        return self.session.insert(offset, ch)

    async def complete(self, offset: int) -> str:
        try:
            return await self.session.inline(offset)
        except Exception:  # a request cancelled as the session ends
            return ""

    async def warm(self, offset: int) -> None:
        """Ask once and wait until the engine has finished with it (time box or not)."""
        await self.complete(offset)
        while (await self.session.stats())["totals"].get("busy"):
            await asyncio.sleep(0.2)

    async def finish(self, result: EditorResult) -> None:
        backend = (await self.session.stats())["totals"].get("backend", {})
        result.backend_requests = backend.get("http_requests", 0)
        result.prompt_tokens = backend.get("cache_reported", 0)
        result.cached_tokens = backend.get("cached_tokens", 0)
        await self.session.close()


class _PeerEditor:
    """One editor doing what llama.vim does: ``/infill`` on every key, dropping the last one."""

    def __init__(self, client: httpx.AsyncClient, prompt_ms: int) -> None:
        self.client = client
        self.prompt_ms = prompt_ms
        self.text = ""
        self.inflight: asyncio.Task | None = None
        self.result: EditorResult | None = None

    async def start(self, trace: Trace) -> None:
        self.text = trace.text

    async def insert(self, offset: int, ch: str) -> int:
        self.text = self.text[:offset] + ch + self.text[offset:]
        return offset + len(ch)

    async def complete(self, offset: int) -> str:
        if self.inflight is not None and not self.inflight.done():
            self.inflight.cancel()  # closes its connection: the engine drops the task
        self.inflight = asyncio.ensure_future(self._infill(offset))
        try:
            return await asyncio.shield(self.inflight)
        except asyncio.CancelledError:
            return ""

    async def warm(self, offset: int) -> None:
        """One ``/infill`` without the prompt time limit, so the slot holds the whole prompt."""
        await self._infill(offset, warm=True)

    async def _infill(self, offset: int, warm: bool = False) -> str:
        line_start = self.text.rfind("\n", 0, offset) + 1
        above = self.text[:line_start].splitlines(keepends=True)[-256:]
        below = self.text[offset:].splitlines(keepends=True)[:65]
        line_prefix = self.text[line_start:offset]
        body = {"input_prefix": "".join(above), "input_suffix": "".join(below),
                "prompt": line_prefix, "input_extra": [], "n_predict": 128,
                "n_indent": len(line_prefix) - len(line_prefix.lstrip()),
                "top_k": 40, "top_p": 0.90, "samplers": ["top_k", "top_p", "infill"],
                "stream": False, "cache_prompt": True, "t_max_predict_ms": 1000}
        if self.prompt_ms and not warm:
            body["t_max_prompt_ms"] = self.prompt_ms
        if warm:
            return await self._post(body)
        assert self.result is not None
        self.result.backend_requests += 1
        data = await self._post(body)
        timings = data.get("timings") or {}
        self.result.cached_tokens += int(timings.get("cache_n", 0))
        self.result.prompt_tokens += int(timings.get("cache_n", 0)) + int(
            timings.get("prompt_n", 0))
        return data.get("content", "")

    async def _post(self, body: dict) -> dict:
        try:
            response = await self.client.post("/infill", json=body)
            return response.json()
        except (httpx.HTTPError, ValueError):
            return {}

    async def finish(self, result: EditorResult) -> None:
        if self.inflight is not None and not self.inflight.done():
            self.inflight.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.inflight


async def _run(name: str, editors: list, traces: list[Trace], key_ms: float,
               pause_ms: float) -> TeamRun:
    run = TeamRun(name, len(editors), pause_ms=pause_ms)
    results = [EditorResult() for _ in editors]
    for editor, result in zip(editors, results):
        if isinstance(editor, _PeerEditor):
            editor.result = result
    await asyncio.gather(*(e.start(t) for e, t in zip(editors, traces)))
    start = time.perf_counter()
    await asyncio.gather(*(e.warm(t.offset) for e, t in zip(editors, traces)))
    run.warm_s = time.perf_counter() - start
    start = time.perf_counter()
    await asyncio.gather(*(_type(t, key_ms, pause_ms, e, r)
                           for e, t, r in zip(editors, traces, results)))
    run.wall_s = time.perf_counter() - start
    await asyncio.gather(*(e.finish(r) for e, r in zip(editors, results)))
    run.results = results
    return run


async def _erase_slots(url: str) -> None:
    """Empty llama-server's slots between runs, so no run starts on another's cache."""
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        try:
            slots = (await client.get("/slots")).json()
        except (httpx.HTTPError, ValueError):
            return
        for slot in slots:
            with contextlib.suppress(httpx.HTTPError):
                await client.post(f"/slots/{slot['id']}", params={"action": "erase"})


async def run_team(args: argparse.Namespace, files: list[Path]) -> list[dict[str, Any]]:
    sizes = [int(n) for n in str(args.editors).split(",") if n.strip()]
    url = args.backend.rstrip("/")
    summaries: list[dict[str, Any]] = []
    for n in sizes:
        traces = _traces(files, n, args.lines)
        if not args.peer_only:
            await _erase_slots(url)
            ours = [_LspEditor(url, args.backend_kind, args.backend_model, args.max_tokens)
                    for _ in range(n)]
            run = await _run("lsp-coder", ours, traces, args.key_ms, args.pause_ms)
            summaries.append(run.summary())
            print(json.dumps(summaries[-1]), flush=True)
        if args.no_peer or args.backend_kind != "llama-server":
            continue
        await _erase_slots(url)
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
            peers = [_PeerEditor(client, args.peer_prompt_ms) for _ in range(n)]
            run = await _run("llama.vim-style", peers, traces, args.key_ms, args.pause_ms)
        summaries.append(run.summary())
        print(json.dumps(summaries[-1]), flush=True)
    return summaries


def team_main(args: argparse.Namespace, files: list[Path]) -> int:
    summaries = asyncio.run(run_team(args, files))
    print(table(summaries))
    for line in ratios(summaries):
        print(line)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "team.json").write_text(json.dumps(summaries, indent=2))
    if plot(summaries, args.out / "team.png"):
        print(f"plot: {args.out / 'team.png'}")
    return 0

