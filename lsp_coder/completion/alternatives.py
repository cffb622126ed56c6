"""Other suggestions for a request the user invoked (``completion.alternatives``): sampled after
the first from the prompt it left cached."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from ..backends.base import Backend
from ..shared_types import FimQuery
from .postprocess import POST_CACHE, PRE_CACHE, FilterContext, run
from .records import CompletionRequest
from .suggestions import NOT_STORED

ALTERNATIVE_TEMPERATURE = 0.8
"""Alternatives are sampled at this temperature (or the configured one, if higher)."""


def sample_alternatives(backend: Backend, query: FimQuery, ctx: FilterContext,
                        req: CompletionRequest, start: float, first: str,
                        extra: dict[str, Any], temperature: float) -> list[str]:
    """Up to ``req.alternatives`` other suggestions, sampled with distinct seeds from the
    prompt the first one left cached; stops when cancelled or past the request's budget.

    ``temperature``: the configured one. ``extra["alternatives_evaluated_tokens"]`` gets the
    prompt tokens they evaluated (few, when the engine kept the prompt)."""
    temperature = max(temperature, ALTERNATIVE_TEMPERATURE)
    seen = {first}
    found: list[str] = []
    extra["alternatives_evaluated_tokens"] = 0
    for n in range(1, req.alternatives + 1):
        over_budget = req.budget_ms is not None and (
            time.perf_counter() - start) * 1000 >= req.budget_ms
        if query.cancelled() or over_budget:
            break
        result = backend.complete(replace(query, temperature=temperature,
                                          seed=(query.seed + n) % 2**32, hint="",
                                          on_text=None))
        if result.stop_reason in NOT_STORED:
            break
        if result.stats is not None:
            extra["alternatives_evaluated_tokens"] += result.stats.evaluated_tokens
        text = run(POST_CACHE, run(PRE_CACHE, result.text, ctx), ctx)
        if text and text not in seen:
            seen.add(text)
            found.append(text)
    return found
