"""The workspace index's parsing process: tree-sitter runs there, so a parse never holds the
server's GIL (the event loop and the inference worker keep running).

A plain child process (``python -m lsp_coder.completion.related.parse_worker``) that reads
pickled batches of paths on its stdin and writes their tags on its stdout: no multiprocessing
machinery, so no resource tracker or queue threads to outlive anyone. It never outlives the
server, however the server ends: the end of its stdin (the server's end of the pipe closes
when the server's process ends, even killed) ends it, and a watcher thread ends it as soon as
its parent is no longer the process that started it; the server also kills and reaps it on
its way out (``reap_all``, from ``server.lifecycle.exit_now``).
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import BinaryIO

from . import tags
from .text import read_regular

PARENT_POLL_S = 0.5
"""How often the worker looks at whether its parent is still there."""

_HEADER = struct.Struct("!Q")

_LIVE: set[subprocess.Popen] = set()
"""The workers of this process that may still run (reaped on the way out)."""
_LIVE_LOCK = threading.Lock()


class WorkerGone(OSError):
    """The parsing process ended or could not start; parse in the calling thread instead."""


def parse_files(paths: list[str], max_bytes: int) -> list[tuple[str, list[tags.Tag]]]:
    """Read and parse ``paths`` (in the worker, or in the index thread for a few files);
    files that are not regular, cannot be read, are binary or too large are left out."""
    out: list[tuple[str, list[tags.Tag]]] = []
    for name in paths:
        language = tags.language_of(os.path.splitext(name)[1])
        if language is None:
            continue
        source = read_regular(Path(name), max_bytes)
        if source is None:
            continue
        try:
            out.append((name, tags.definitions(language, source)))
        except (ValueError, RecursionError, MemoryError):
            continue
    return out


def _send(stream: BinaryIO, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> object | None:
    """The next value on ``stream``; None at its end."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)  # our own parent's data


class ParseWorker:
    """One parsing process, started on first use; used from one thread at a time (the index
    thread); ``close`` from any thread."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def parse(self, paths: list[str], max_bytes: int) -> list[tuple[str, list[tags.Tag]]]:
        """Tags of ``paths``, parsed in the worker; raises WorkerGone."""
        proc = self._started()
        try:
            _send(proc.stdin, (paths, max_bytes))
            reply = _receive(proc.stdout)
        except (OSError, ValueError, pickle.UnpicklingError, EOFError) as exc:
            raise WorkerGone(f"the parsing process failed ({type(exc).__name__})") from None
        if not isinstance(reply, list):
            raise WorkerGone("the parsing process ended")
        return reply

    def _started(self) -> subprocess.Popen:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return self._proc
            root = str(Path(__file__).resolve().parents[3])  # the folder holding lsp_coder/
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                    close_fds=True)
            except OSError as exc:
                raise WorkerGone(f"cannot start the parsing process ({exc})") from None
            self._proc = proc
        with _LIVE_LOCK:
            _LIVE.add(proc)
        return proc

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None when none runs)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def close(self) -> None:
        """End the worker now (a batch in flight is dropped) and reap it."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            _end(proc)


def _end(proc: subprocess.Popen) -> None:
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        proc.kill()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        pass
    with _LIVE_LOCK:
        _LIVE.discard(proc)


def reap_all() -> None:
    """Kill and reap every parsing process of this one (the server is ending)."""
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for proc in procs:
        _end(proc)


def _watch_parent(parent: int) -> None:
    """End this process once its parent is gone (it was re-parented)."""
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(0)


def main() -> None:
    """The worker: parse each batch read on stdin and write its tags on stdout, until stdin
    ends or the parent is gone."""
    parent = os.getppid()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    try:
        os.nice(10)  # yield the CPU to the model
    except OSError:
        pass
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            request = _receive(stdin)
        except (OSError, ValueError, pickle.UnpicklingError, EOFError):
            return
        if request is None:
            return
        paths, max_bytes = request
        try:
            _send(stdout, parse_files(paths, max_bytes))
        except OSError:  # the parent closed its end
            return


if __name__ == "__main__":
    main()
