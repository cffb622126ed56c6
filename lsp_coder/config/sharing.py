"""Which editor sessions can share one loaded model: those whose settings choose the same."""

from __future__ import annotations

import hashlib
import json

from .converter import to_dict
from .sections import Config

MODEL_SECTIONS = ("model", "cache", "backend")
"""The sections whose settings choose the loaded model (with ``speculative.draft_model``):
sessions that differ in them cannot share one."""


def model_key(config: Config) -> str:
    """A short digest of the settings that choose the model and its cache: equal keys can share
    one loaded model (``[model]``, ``[cache]``, ``[backend]``, ``speculative.draft_model``)."""
    tree = to_dict(config)
    chosen = {name: tree[name] for name in MODEL_SECTIONS}
    chosen["draft_model"] = config.speculative.draft_model
    text = json.dumps(chosen, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
