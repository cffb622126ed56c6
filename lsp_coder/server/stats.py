"""Counters of what the server and engine did, for ``lspCoder.stats``."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from ..shared_types import PrefillResult, RequestStats

_SUMMED = ("prompt_tokens", "reused_tokens", "shifted_tokens", "evaluated_tokens",
           "generated_tokens", "known_tokens", "prefill_ms", "decode_ms", "decode_steps",
           "near_ties")


class Stats:
    """Totals since start plus the most recent requests. Thread-safe."""

    def __init__(self, recent: int = 50) -> None:
        self._lock = threading.Lock()
        self._recent: deque[dict[str, Any]] = deque(maxlen=recent)
        self._totals: dict[str, Any] = {
            "requests": 0, "background": 0, "cache_hits": 0, "cancelled": 0, "superseded": 0,
            "unsure": 0, "short_prompts": 0, "held_sections": 0, "empty": 0, "shown": 0,
            "accepted": 0,
            "draft_proposed": 0, "draft_accepted": 0, "prefetches_taken": 0,
            "drafters": {}, **{k: 0 for k in _SUMMED},
            "idle": {"jobs": 0, "evaluated_tokens": 0, "prefill_ms": 0.0, "preempted": 0,
                     "preempt_wait_ubatches_max": 0, "outcomes": {}, "kinds": {},
                     "prefetched": 0, "prefetch_tokens": 0, "prefetch_ms": 0.0},
        }

    def count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._totals[key] += n

    def record(self, kind: str, *, text: str, cached: bool, latency_ms: float,
               stats: RequestStats | None, outcome: str, prefetch_taken: bool = False,
               invoked: bool = False, debounce_ms: float = 0.0, alternatives: int = 0,
               alternatives_evaluated_tokens: int = 0) -> None:
        """Add one answered request (``outcome``: ok, cancelled, superseded, unsure (hidden
        below ``completion.min_confidence``)...;
        ``prefetch_taken``: answered by the idle prefetch that was generating its state;
        ``invoked``: the user asked (no debounce); ``debounce_ms``: the wait before the
        engine started; ``alternatives``: other suggestions answered with it, whose sampling
        evaluated ``alternatives_evaluated_tokens`` prompt tokens)."""
        entry: dict[str, Any] = {"time": time.time(), "kind": kind, "cached": cached,
                                 "latency_ms": round(latency_ms, 2), "outcome": outcome,
                                 "chars": len(text), "prefetch_taken": prefetch_taken,
                                 "invoked": invoked, "debounce_ms": round(debounce_ms, 2),
                                 "alternatives": alternatives,
                                 "alternatives_evaluated_tokens": alternatives_evaluated_tokens}
        with self._lock:
            t = self._totals
            t["requests"] += 1
            t["cache_hits"] += cached
            t["prefetches_taken"] += prefetch_taken
            if outcome in ("cancelled", "superseded", "unsure"):
                t[outcome] += 1
            elif not text:
                t["empty"] += 1
            else:
                t["shown"] += 1
            if stats is not None:
                self._add_engine(stats)
                t["short_prompts"] += stats.short_prompt
                t["held_sections"] += stats.held_section
                entry.update({k: getattr(stats, k) for k in _SUMMED})
                entry["short_prompt"] = stats.short_prompt
                entry["held_section"] = stats.held_section
                entry["second_pass"] = stats.second_pass
                entry["token_probs"] = list(stats.token_probs)
                entry["first_line_tokens"] = stats.first_line_tokens
                entry["draft_proposed"] = dict(stats.draft_proposed)
                entry["draft_accepted"] = dict(stats.draft_accepted)
            self._recent.append(entry)

    def record_background(self, stats: RequestStats) -> None:
        """Engine work done for no waiting request (cache confirm/extend, time-boxed rest)."""
        with self._lock:
            self._totals["background"] += 1
            self._add_engine(stats)

    def record_idle(self, kind: str, result: PrefillResult) -> None:
        """One idle prefill (``kind``: what it prepared for)."""
        with self._lock:
            idle = self._totals["idle"]
            idle["jobs"] += 1
            idle["evaluated_tokens"] += result.evaluated_tokens
            idle["prefill_ms"] += result.prefill_ms
            idle["outcomes"][result.outcome] = idle["outcomes"].get(result.outcome, 0) + 1
            per_kind = idle["kinds"].setdefault(kind, {"jobs": 0, "evaluated_tokens": 0})
            per_kind["jobs"] += 1
            per_kind["evaluated_tokens"] += result.evaluated_tokens

    def record_prefetch(self, stats: RequestStats, stored: bool) -> None:
        """A suggestion generated as idle work (``stored``: it went into the cache)."""
        with self._lock:
            idle = self._totals["idle"]
            idle["prefetched"] += stored
            idle["prefetch_tokens"] += stats.generated_tokens
            idle["prefetch_ms"] += stats.prefill_ms + stats.decode_ms

    def idle_preempted(self, ubatches_waited: int) -> None:
        """A request stopped idle work and started after ``ubatches_waited`` more ubatches."""
        with self._lock:
            idle = self._totals["idle"]
            idle["preempted"] += 1
            idle["preempt_wait_ubatches_max"] = max(idle["preempt_wait_ubatches_max"],
                                                    ubatches_waited)

    def _add_engine(self, stats: RequestStats) -> None:
        t = self._totals
        for key in _SUMMED:
            t[key] += getattr(stats, key)
        for name, n in stats.draft_proposed.items():
            acc = stats.draft_accepted.get(name, 0)
            d = t["drafters"].setdefault(name, {"proposed": 0, "accepted": 0})
            d["proposed"] += n
            d["accepted"] += acc
            t["draft_proposed"] += n
            t["draft_accepted"] += acc

    def snapshot(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        with self._lock:
            totals = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self._totals.items()}
            totals["drafters"] = {k: dict(v) for k, v in self._totals["drafters"].items()}
            idle = dict(self._totals["idle"])
            idle["outcomes"] = dict(idle["outcomes"])
            idle["kinds"] = {k: dict(v) for k, v in idle["kinds"].items()}
            idle["prefill_ms"] = round(idle["prefill_ms"], 2)
            idle["prefetch_ms"] = round(idle["prefetch_ms"], 2)
            totals["idle"] = idle
            for key in ("prefill_ms", "decode_ms"):
                totals[key] = round(totals[key], 2)
            if extra:
                totals.update(extra)
            return {"totals": totals, "recent": list(self._recent)}
