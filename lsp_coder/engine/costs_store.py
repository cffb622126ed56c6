"""Batch costs measured once per machine and model, kept for the next load.

Calibrating the 1.5B's verification batches takes about 4.7 s of a 7 s load on a 2-core
CPU, paid again by every server start (and by the restart after a crash). The shape it
measures depends only on the model file, the llama.cpp build, the CPU and the context's
batch and thread settings, so a table measured under the same ones is reused; real decodes
still rescale it as a whole (``BatchCosts.observe``). A file that cannot be read or written
only costs a calibration, and a table is measured again after a week, or at once when a
single-token decode timed at load is 1.5x faster than the table's (it was measured while
something else used the CPU: its batches would look cheap against single tokens, and drafts
pay where they do not).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import tempfile
import time
from dataclasses import astuple
from functools import lru_cache
from pathlib import Path

import llama_cpp

from .costs import BatchCosts
from .llama import ModelParams
from .llama_context import ContextParams

log = logging.getLogger(__name__)

KEPT_ENTRIES = 16
"""Tables kept in the file (the oldest written drops out first)."""

MAX_AGE_S = 7 * 24 * 3600
"""A table older than this is measured anew (one measured while the machine was busy does
not stay for good)."""


@lru_cache(maxsize=1)
def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def costs_key(model_path: Path, model: ModelParams, ctx: ContextParams,
              sizes: tuple[int, ...], read_aside: bool = False) -> str:
    """What a measured table depends on: another value of any of these measures anew."""
    st = model_path.stat()
    parts = (model_path.resolve(), st.st_size, st.st_mtime_ns, llama_cpp.__version__,
             _cpu_name(), os.cpu_count(), ctx.n_threads, ctx.n_batch, ctx.n_ubatch,
             ctx.kv_unified, astuple(model), sizes, *(["read aside"] if read_aside else []))
    return "|".join(map(str, parts))


class CostsStore:
    """A JSON file of measured batch costs by ``costs_key``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> BatchCosts | None:
        entry = self._read().get(key)
        try:
            measured = {int(size): float(ms) for size, ms in entry["ms"].items()}
            prefill = float(entry["prefill_token_ms"])
            age = time.time() - float(entry["measured_at"])
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
        if not measured or min(measured.values()) <= 0 or prefill <= 0:
            return None
        if not 0 <= age < MAX_AGE_S:
            return None
        return BatchCosts(measured, prefill)

    def put(self, key: str, costs: BatchCosts) -> None:
        data = self._read()
        data.pop(key, None)
        data[key] = {"ms": {str(k): v for k, v in costs.measured.items()},
                     "prefill_token_ms": costs.prefill_token_ms, "measured_at": time.time()}
        while len(data) > KEPT_ENTRIES:
            data.pop(next(iter(data)))
        temp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, delete=False,
                                             prefix=".costs-", encoding="utf-8") as f:
                temp = Path(f.name)
                json.dump(data, f)
            os.replace(temp, self.path)
        except OSError as exc:
            log.info("batch costs not kept (%s): the next load measures them again", exc)
            if temp is not None:
                temp.unlink(missing_ok=True)
