"""The terminal progress bar of a model load (tqdm), for ``try``, ``doctor`` and ``complete``."""

from __future__ import annotations

import sys
from typing import TextIO

from tqdm import tqdm

from ..completion.service import CompletionService
from ..load_progress import LoadProgress


class LoadBar:
    """A bar from 0 to 100 % on stderr, led by what the load is doing; where the stream is not
    a terminal (a log, a pipe), one line for each thing the load does instead of a bar's
    redraws.

    It appears with the first report, so a load with nothing to report (a serving engine)
    prints nothing. Its ``update`` fits both a ``LoadProgress`` listener (in-process loads)
    and the server's ``$/progress`` reports (``try``). Use it as a context manager: leaving
    closes the bar.
    """

    def __init__(self, title: str = "lsp-coder: loading model",
                 stream: TextIO | None = None) -> None:
        self._title = title
        self._stream = stream
        self._bar: tqdm | None = None
        self._said = ""
        """The last line written where the stream is not a terminal."""
        self._percent = 0
        """How far the load has reported (there)."""

    def update(self, percent: int, label: str = "") -> None:
        """Move the bar to ``percent`` (never back), with ``label`` (what the load is doing)
        in front of it."""
        stream = self._stream or sys.stderr
        if not stream.isatty():
            line = f"lsp-coder: {label}" if label else (self._said or self._title)
            if line != self._said or percent >= 100 > self._percent:
                stream.write(f"{line}: {min(percent, 100)}%\n")
                stream.flush()
                self._said = line
            self._percent = max(self._percent, percent)
            return
        if self._bar is None:
            self._bar = tqdm(total=100, desc=self._title, unit="%",
                             file=stream,
                             bar_format="{desc}: {percentage:3.0f}%|{bar}|",
                             dynamic_ncols=True, leave=True)
        if label:
            self._bar.set_description_str(f"lsp-coder: {label}", refresh=False)
        if percent > self._bar.n:
            self._bar.update(min(percent, 100) - self._bar.n)
        else:
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> LoadBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_with_bar(service: CompletionService) -> str | None:
    """``service.load()`` with a bar over its whole plan; returns its error, if any."""
    with LoadBar() as bar:
        return service.load(LoadProgress(service.load_plan(), bar.update))
