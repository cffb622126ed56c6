"""The checks a layer's values pass besides their types: ranges, limits between keys, the
serving engine's URL and HTTP headers. Each returns what can be used and what was wrong."""

from __future__ import annotations

import math
import re
from dataclasses import fields, replace
from typing import Any

from .messages import shown
from .sections import Config
from .urls import redact_url, url_problem

HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP header name (RFC 9110's token)."""


def header_problems(headers: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The headers that can be sent, and what is wrong with the others: a name that is not
    a token, a value with a line break or another control character (it would end the header
    and start another: header injection)."""
    kept: dict[str, str] = {}
    problems: list[str] = []
    for name, value in headers.items():
        if not HEADER_NAME.fullmatch(name):
            problems.append(f"backend.headers key {shown(name)}: a header name is letters,"
                            " digits and !#$%&'*+-.^_`|~ only; header left out")
        elif any(ord(c) < 32 and c != "\t" or ord(c) == 127 for c in value):
            problems.append(f"backend.headers.{name} = {shown(value)}: a header value may not"
                            " hold a line break or a control character; header left out")
        else:
            kept[name] = value
    return kept, problems


def check_ranges(config: Config, previous: Config) -> tuple[Config, list[str]]:
    """``config`` with each out-of-range value put back to ``previous``'s, and what was wrong."""
    problems: list[str] = []
    sections: dict[str, Any] = {}
    for section in fields(config):
        value, before = getattr(config, section.name), getattr(previous, section.name)
        fixed: dict[str, Any] = {}
        for f in fields(value):
            if "range" not in f.metadata:
                continue
            low, high = f.metadata["range"]
            v = getattr(value, f.name)
            if not (math.isfinite(v) and low <= v <= high):
                problems.append(f"{section.name}.{f.name} = {v!r} is out of range"
                                f" (allowed: {low} to {high})")
                fixed[f.name] = getattr(before, f.name)
        if fixed:
            sections[section.name] = replace(value, **fixed)
    return replace(config, **sections), problems


def check_relations(config: Config, previous: Config) -> tuple[Config, list[str]]:
    """Limits between keys; a broken one puts the keys involved back to ``previous``'s."""
    problems: list[str] = []
    mc, cc = config.model, config.completion
    if mc.n_batch < mc.n_seq_max:
        problems.append(f"model.n_batch = {mc.n_batch} must be at least model.n_seq_max ="
                        f" {mc.n_seq_max} (llama.cpp needs an output row per sequence)")
        mc = replace(mc, n_batch=previous.model.n_batch, n_seq_max=previous.model.n_seq_max)
    kv = min(config.cache.kv_budget_tokens or mc.n_ctx, mc.n_ctx)
    if cc.max_tokens > kv // 2:
        problems.append(f"completion.max_tokens = {cc.max_tokens} must be at most half the KV"
                        f" cache ({kv // 2}; model.n_ctx, cache.kv_budget_tokens)")
        cc = replace(cc, max_tokens=previous.completion.max_tokens)
        mc = replace(mc, n_ctx=previous.model.n_ctx)
        config = replace(config, cache=replace(
            config.cache, kv_budget_tokens=previous.cache.kv_budget_tokens))
    return replace(config, model=mc, completion=cc), problems


def check_url(config: Config, previous: Config) -> tuple[Config, list[str]]:
    """``[backend] url`` must be usable when set; a bad one puts back ``previous``'s."""
    url = config.backend.url
    problem = url_problem(url) if url else ""
    if not problem:
        return config, []
    return (replace(config, backend=replace(config.backend, url=previous.backend.url)),
            [f"[backend] url = {redact_url(url)!r}: {problem}"])
