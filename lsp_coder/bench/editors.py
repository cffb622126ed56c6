"""``lsp-coder bench editors``: several editors on one shared server against a model each.

For each number of editors N and each mode (``shared``: every editor's ``lsp-coder`` forwards
to one shared server; ``own``: ``--no-shared``, a model in each process), N real stdio
sessions start at once, each opens a different file and all type at the same time, one key
every ``--key-ms`` (or when the answer comes, if later), asking after every key. Measured:

- the resident memory of every lsp-coder process (forwarders, shared server, or the servers
  with their own models), sampled while they type: the peak, and the most per editor;
- time to a suggestion per key while all type (p50, p90), and the share of prompt tokens the
  KV cache served;
- the first answer in a second window on a file already open in another (``second``) against
  the first answer in the first window (``cold``), on the same file and cursor;
- with ``--same-file``, two editors that type the same keys in the same file, each in its own
  window (a file open in two windows);
- with ``--kill``, runs of their own (so the latencies above are not theirs) where the shared
  server is killed halfway through the typing: every request still
  answered (a result or an error), and the time until suggestions come back, against a model
  load.

The shared servers run in a runtime folder of the benchmark's own, never the user's.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from ..client.session import Session, process_rss_bytes
from ..client.trace import Trace, make_trace
from .editors_report import EditorsRun, label, plot_editors

MODES = ("shared", "own")
ANSWER_S = 600.0
"""A request not answered in this long counts as unanswered."""
MEMORY_SHARE = 0.7
"""An ``own`` run is skipped when N models would take more than this share of free memory."""


def runtime_pids(runtime: Path) -> list[int]:
    """The shared servers running in ``runtime`` (from their info files)."""
    pids = []
    for info in runtime.glob("server-*.json"):
        try:
            pids.append(int(json.loads(info.read_text())["pid"]))
        except (OSError, ValueError, KeyError):
            continue
    return [pid for pid in pids if process_rss_bytes(pid) > 0]


def children(pid: int) -> list[int]:
    """The child processes of ``pid``, whichever of its threads started them."""
    try:
        return [child.pid for child in psutil.Process(pid).children()]
    except psutil.Error:
        return []


class Memory:
    """Samples the resident memory of a run's lsp-coder processes until stopped."""

    def __init__(self, sessions: list[Session], runtime: Path) -> None:
        self.sessions, self.runtime = sessions, runtime
        self.peak = 0
        self._task: asyncio.Task | None = None

    def now(self) -> int:
        pids = {s.pid for s in self.sessions if s.pid} | set(runtime_pids(self.runtime))
        for pid in list(pids):
            pids |= set(children(pid))  # index workers and the like
        return sum(process_rss_bytes(pid) for pid in pids)

    async def _run(self) -> None:
        while True:
            self.peak = max(self.peak, self.now())
            await asyncio.sleep(0.25)

    def __enter__(self) -> Memory:
        self._task = asyncio.ensure_future(self._run())
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._task is not None
        self._task.cancel()
        self.peak = max(self.peak, self.now())


async def _ask(session: Session, offset: int, run: EditorsRun) -> str:
    sent = time.perf_counter()
    try:
        text = await asyncio.wait_for(session.inline(offset), ANSWER_S)
    except TimeoutError:
        run.unanswered += 1
        return ""
    except Exception:  # an error answer (the shared server went away) counts as answered
        text = ""
    done = time.perf_counter()
    run.answered += 1
    run.latencies_ms.append((done - sent) * 1000)
    run.answers.append((sent, done, bool(text)))
    return text


async def _type(session: Session, trace: Trace, run: EditorsRun, key_ms: float,
                halfway: asyncio.Event | None) -> None:
    session.open(trace.uri, trace.text)
    offset = trace.offset
    for n, char in enumerate(trace.typed):
        if halfway is not None and n == len(trace.typed) // 2:
            halfway.set()
        start = time.perf_counter()
        offset = session.insert(offset, char)
        await _ask(session, offset, run)
        await asyncio.sleep(max(0.0, key_ms / 1000 - (time.perf_counter() - start)))


async def _kill(runtime: Path, halfway: asyncio.Event, run: EditorsRun) -> float:
    """Kill the shared server once the typing is halfway; returns when (perf_counter s)."""
    await halfway.wait()
    pids = runtime_pids(runtime)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    run.kill = {"killed_pids": pids}
    return time.perf_counter()


def _back_after(run: EditorsRun, killed: float) -> float | None:
    """Seconds from the kill to the first suggestion asked for after it (None: none came)."""
    back = [done - killed for sent, done, shown in run.answers if sent >= killed and shown]
    return min(back) if back else None


async def run_editors(mode: str, traces: list[Trace], options: dict[str, Any], key_ms: float,
                      kill: bool, runtime: Path, same_file: bool = False) -> EditorsRun:
    """N = len(traces) editors typing at once in ``mode``; ``kill``: the shared server killed
    halfway through."""
    run = EditorsRun(mode, len(traces), same_file=same_file)
    shared = mode == "shared"
    sessions = [Session(options, shared=shared) for _ in traces]
    with Memory(sessions, runtime) as memory:
        start = time.perf_counter()
        await asyncio.gather(*(s.start_loaded(f"{mode} editor {i}")
                               for i, s in enumerate(sessions)))
        run.load_s = time.perf_counter() - start
        await _second_window(run, sessions[0], traces[0], options, shared)
        memory.peak = 0  # from here: the editors typing
        halfway = asyncio.Event() if kill and shared else None
        jobs = [_type(s, t, run, key_ms, halfway if i == 0 else None)
                for i, (s, t) in enumerate(zip(sessions, traces))]
        if halfway is not None:
            killed = asyncio.ensure_future(_kill(runtime, halfway, run))
        await asyncio.gather(*jobs)
        if halfway is not None:
            run.kill["suggestions_back_s"] = _back_after(run, await killed)
        run.rss_peak_bytes = max(memory.peak, memory.now())
        for session in sessions:
            totals = (await session.stats())["totals"]
            run.prompt_tokens += totals.get("prompt_tokens", 0)
            run.reused_tokens += totals.get("reused_tokens", 0)
    await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    return run


async def _second_window(run: EditorsRun, first: Session, trace: Trace,
                         options: dict[str, Any], shared: bool) -> None:
    """A file's first answer in the first window (cold), then in a second window that opens
    the same file at the same cursor while the first keeps it open; the second window closes
    before the typing starts."""
    source = make_trace(trace.path, 1, at=0.3)
    cold = Trace(source.path.with_name(f"second-window-{source.path.name}"), source.text,
                 source.offset, source.typed)
    first.open(cold.uri, cold.text)
    sent = time.perf_counter()
    await first.inline(cold.offset)
    run.cold_ms = (time.perf_counter() - sent) * 1000
    second = Session(options, shared=shared)
    try:
        await second.start_loaded(f"{run.mode} second window")
        second.open(cold.uri, cold.text)
        sent = time.perf_counter()
        await second.inline(cold.offset)
        run.second_ms = (time.perf_counter() - sent) * 1000
        last = (await second.stats())["recent"][-1]
        run.second_tokens = (last.get("prompt_tokens", 0), last.get("reused_tokens", 0))
    finally:
        await second.close()


async def bench_editors(files: list[Path], counts: list[int], modes: list[str],
                        options: dict[str, Any], lines: int, key_ms: float, kill: bool,
                        out: Path, same_file: bool = False) -> list[EditorsRun]:
    """Every (N, mode) run in one invocation, then (``same_file``) two editors typing in the
    same file in each mode; a JSON and a PNG in ``out``."""
    runtime = Path(tempfile.mkdtemp(prefix="lsp-coder-bench-"))
    os.environ["LSP_CODER_RUNTIME_DIR"] = str(runtime)  # the bench's own shared servers
    os.environ["LSP_CODER_IDLE_EXIT_S"] = "0"
    plans = [([make_trace(files[i % len(files)], lines) for i in range(n)], False, mode, False)
             for n in counts for mode in modes]
    if same_file:
        plans += [([make_trace(files[0], lines)] * 2, True, mode, False) for mode in modes]
    if kill and "shared" in modes:
        plans += [([make_trace(files[i % len(files)], lines) for i in range(n)], False,
                   "shared", True) for n in counts if n > 1]
    runs: list[EditorsRun] = []
    per_model = 0
    for traces, same, mode, killing in plans:
        n = len(traces)
        free = psutil.virtual_memory().available
        if mode == "own" and per_model and n * per_model > MEMORY_SHARE * free:
            run = EditorsRun(mode, n, same_file=same, skipped=f"{n} models need about"
                             f" {n * per_model / 2**30:.1f} GiB")
        else:
            print(f"editors: {label(n, same)} editor(s), {mode}"
                  + (", the server killed halfway" if killing else ""), flush=True)
            run = await run_editors(mode, traces, options, key_ms, killing, runtime,
                                    same_file=same)
            if mode == "own":
                per_model = max(per_model, run.rss_peak_bytes // max(n, 1))
        runs.append(run)
    out.mkdir(parents=True, exist_ok=True)
    (out / "editors.json").write_text(json.dumps([r.summary() for r in runs], indent=2))
    plot_editors([r for r in runs if not r.same_file and not r.kill], out / "editors.png")
    return runs
