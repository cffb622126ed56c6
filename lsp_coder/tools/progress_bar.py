"""The terminal progress bar of a model load (tqdm), for ``try``, ``doctor`` and ``complete``."""

from __future__ import annotations

import sys
from typing import TextIO

from tqdm import tqdm


class LoadBar:
    """A bar from 0 to 100 % on stderr, led by what the load is doing.

    Its ``update`` fits both a ``LoadProgress`` listener (in-process loads) and the server's
    ``$/progress`` reports (``try``). Use it as a context manager: leaving closes the bar.
    """

    def __init__(self, title: str = "lsp-coder: loading model",
                 stream: TextIO | None = None) -> None:
        self._bar = tqdm(total=100, desc=title, unit="%", file=stream or sys.stderr,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}|",
                         dynamic_ncols=True, leave=True)

    def update(self, percent: int, label: str = "") -> None:
        """Move the bar to ``percent`` (never back), with ``label`` (what the load is doing)
        in front of it."""
        if label:
            self._bar.set_description_str(f"lsp-coder: {label}", refresh=False)
        if percent > self._bar.n:
            self._bar.update(min(percent, 100) - self._bar.n)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> LoadBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
