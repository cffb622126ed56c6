"""Neovim as a user sees it: `nvim --embed` with a UI attached over msgpack-rpc.

The test sends keys as typed (`nvim_input`), runs Lua in the editor (`nvim_exec_lua`), and reads
the screen grid the UI protocol draws (`ext_linegrid`): each flushed screen is kept, in order,
with every cell's highlight group, so a test can check what was on screen after a key.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2


@dataclass(frozen=True)
class Screen:
    """One flushed screen: its rows of text and the highlight group names of each cell."""

    number: int
    """How many screens were flushed before this one."""
    rows: list[str]
    groups: list[list[str]]
    """Per row, per cell: the highlight groups the cell's attributes came from."""
    cursor: tuple[int, int]
    """The cursor's row and column on the grid."""

    def text(self) -> str:
        return "\n".join(row.rstrip() for row in self.rows)

    def cells_in_group(self, group: str) -> str:
        """The text of the cells drawn with highlight group `group`, row by row."""
        return "\n".join("".join(ch for ch, names in zip(row, groups) if group in names)
                         for row, groups in zip(self.rows, self.groups)).strip("\n")


class NvimError(Exception):
    """A request Neovim answered with an error, or Neovim went away."""


class NvimUI:
    """A running `nvim --embed` (with `args` after its own) with a UI of `width` x `height`
    cells attached; its stderr goes to `log`."""

    def __init__(self, program: str, *, cwd: Path, env: dict[str, str], log: Path,
                 args: tuple[str, ...] = (), width: int = 80, height: int = 24) -> None:
        self._stderr = log.open("wb")
        self.proc = subprocess.Popen(
            [program, "--embed", "-u", "NONE", "-i", "NONE", "-n", *args], cwd=cwd, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            start_new_session=True)
        self._ids = itertools.count(1)
        self._answers: dict[int, tuple[Any, Any]] = {}
        self._lock = threading.Condition()
        self._grid: list[list[list[Any]]] = []  # rows of [text, hl id] cells
        self._cursor = (0, 0)
        self._groups: dict[int, list[str]] = {0: []}
        self.screens: list[Screen] = []
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.request("nvim_ui_attach", width, height,
                     {"ext_linegrid": True, "ext_hlstate": True, "rgb": True})

    # -- msgpack-rpc -------------------------------------------------------------------------

    def _read(self) -> None:
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        while chunk := os.read(self.proc.stdout.fileno(), 65536):
            unpacker.feed(chunk)
            for message in unpacker:
                self._dispatch(message)
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def _dispatch(self, message: list) -> None:
        if message[0] == RESPONSE:
            with self._lock:
                self._answers[message[1]] = (message[2], message[3])
                self._lock.notify_all()
        elif message[0] == NOTIFICATION and message[1] == "redraw":
            with self._lock:
                for event in message[2]:
                    handler = getattr(self, f"_on_{event[0]}", None)
                    if handler is not None:
                        for args in event[1:]:
                            handler(*args)
                self._lock.notify_all()
        elif message[0] == REQUEST:
            self._send([RESPONSE, message[1], "no requests to the test client", None])

    def _send(self, message: list) -> None:
        self.proc.stdin.write(msgpack.packb(message))
        self.proc.stdin.flush()

    def request(self, method: str, *args: Any, timeout: float = 60) -> Any:
        """Calls the API function `method`; raises NvimError with its error."""
        msgid = next(self._ids)
        self._send([REQUEST, msgid, method, list(args)])
        deadline = time.monotonic() + timeout
        with self._lock:
            while msgid not in self._answers:
                if self._closed:
                    raise NvimError(f"Neovim exited during {method}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise NvimError(f"no answer to {method} in {timeout} s")
                self._lock.wait(left)
            error, result = self._answers.pop(msgid)
        if error is not None:
            raise NvimError(f"{method}: {error}")
        return result

    def lua(self, code: str, *args: Any) -> Any:
        """Runs a Lua chunk (its arguments are `...`) and returns what it returns."""
        return self.request("nvim_exec_lua", code, list(args))

    def input(self, keys: str) -> None:
        """Types `keys` (Neovim's key notation) as the user would."""
        self.request("nvim_input", keys)

    # -- the screen --------------------------------------------------------------------------

    def _on_grid_resize(self, grid: int, width: int, height: int) -> None:
        self._grid = [[[" ", 0] for _ in range(width)] for _ in range(height)]

    def _on_grid_clear(self, grid: int) -> None:
        for row in self._grid:
            for cell in row:
                cell[0], cell[1] = " ", 0

    def _on_grid_cursor_goto(self, grid: int, row: int, col: int) -> None:
        self._cursor = (row, col)

    def _on_grid_line(self, grid: int, row: int, col: int, cells: list, *_wrap: Any) -> None:
        hl = 0
        for cell in cells:
            text = cell[0]
            if len(cell) > 1:
                hl = cell[1]
            for _ in range(cell[2] if len(cell) > 2 else 1):
                self._grid[row][col] = [text, hl]
                col += 1

    def _on_grid_scroll(self, grid: int, top: int, bot: int, left: int, right: int,
                        rows: int, _cols: int) -> None:
        span = range(top, bot - rows) if rows > 0 else range(bot - 1, top - rows - 1, -1)
        for row in span:
            self._grid[row][left:right] = [list(c) for c in self._grid[row + rows][left:right]]

    def _on_hl_attr_define(self, hl_id: int, _rgb: dict, _cterm: dict, info: list) -> None:
        self._groups[hl_id] = [entry.get("hi_name", "") for entry in info if entry]

    def _on_flush(self) -> None:
        self.screens.append(Screen(
            number=len(self.screens),
            rows=["".join(cell[0] for cell in row) for row in self._grid],
            groups=[[self._groups.get(cell[1], []) for cell in row] for row in self._grid],
            cursor=self._cursor))

    def wait_screen(self, what: str, predicate: Callable[[Screen], bool], timeout: float,
                    after: int = 0) -> Screen:
        """The first screen flushed after `after` screens for which `predicate` holds; waits
        for it, failing with the last screen after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        seen = after
        with self._lock:
            while True:
                for screen in self.screens[seen:]:
                    if predicate(screen):
                        return screen
                seen = max(seen, len(self.screens))
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    last = self.screens[-1].text() if self.screens else "(no screen)"
                    raise NvimError(f"timed out waiting for {what}; the screen:\n{last}")
                self._lock.wait(min(left, 0.5))

    def close(self) -> None:
        """Ends Neovim and everything it started (its language servers)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self._stderr.close()
