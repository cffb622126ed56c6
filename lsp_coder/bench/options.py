"""The server options every benchmark run starts from (``initializationOptions``)."""

from __future__ import annotations

import argparse
import tomllib
from typing import Any

from ..config import Config, ConfigError, apply

SCORED_LINE = {"max_lines": 1, "min_confidence": 0.0}
"""The completion settings of the benches that score answers: one line (what is scored), and
every answer as the model wrote it, however unsure (what hiding would do is tabled from the
answers' probabilities)."""


def server_options(args: argparse.Namespace, editor: bool = False,
                   **overrides: dict[str, Any]) -> dict[str, Any]:
    """The bench's settings: the model given on the command line, no debounce, and (unless
    ``--time-box``) no time box, so each awaited key gets the full answer and runs compare;
    ``overrides`` are merged into their sections. ``editor``: the product's debounce, time box
    (unless ``--time-box``) and prompts instead, as an editor gets them."""
    options: dict[str, Any] = {
        "model": {},
        # No debounce and (unless --time-box) no time box: each awaited key gets the full
        # answer, so runs compare.
        "completion": {"debounce_ms": 0, "inline_budget_ms": getattr(args, "time_box", 0),
                       "max_tokens": args.max_tokens},
        "cache": {},
        "speculative": {},
        # The bench's files come from installed packages, which a repository around them may
        # ignore (pyenv's .gitignore names its /versions): they are read all the same.
        "context": {"ignore_files": False},
        # Full prompts throughout, as in the figures measured before the short prompt for a
        # cold cache became the default (bench idle --cold adds a run with it).
        "idle": {"cold_prompt_ms": 0},
    }
    if editor:
        options["completion"] = {"max_tokens": args.max_tokens}
        if getattr(args, "time_box", 0):
            options["completion"]["inline_budget_ms"] = args.time_box
        options["idle"] = {}
    if args.model:
        options["model"]["path"] = args.model
    if args.draft:
        options["model"]["draft_path"] = args.draft
    for section, values in overrides.items():
        options[section].update(values)
    for setting in getattr(args, "settings", []):
        section, key, value = parse_setting(setting)
        options.setdefault(section, {})[key] = value
    return options


def parse_setting(setting: str) -> tuple[str, str, Any]:
    """``SECTION.KEY=VALUE`` as (section, key, value), the value read as TOML (a bare word is
    a string); raises ConfigError for a malformed one or a setting the server would refuse."""
    name, sep, text = setting.partition("=")
    section, dot, key = (part.strip() for part in name.partition("."))
    text = text.strip()
    if not (sep and dot and section and key and text):
        raise ConfigError(f"--set {setting}: expected SECTION.KEY=VALUE")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    apply(Config(), {section: {key: value}}, f"--set {setting}")
    return section, key, value
