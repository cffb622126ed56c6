"""Runs every golden case in tests/golden/<category>/<case>.toml through the whole pipeline.

A case has `description`, an optional `[config]` (`multiline`), a `[context]`
with `filepath`, `language` and a marked `text` (see markers.py; the text
between `├` and `┤` is the raw model output) and an `[expected]` table with
exactly one of `text = "..."`, `unchanged = true` or `discard = true`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from lsp_coder.completion.postprocess import postprocess
from tests.unit.completion.postprocess.markers import parse_marked

GOLDEN_DIR = Path(__file__).resolve().parents[3] / "golden"
CASES = sorted(GOLDEN_DIR.glob("*/*.toml"))
MIN_CASES = 15


def _load(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


def _expected(case: dict[str, Any], raw: str) -> str:
    expected = case["expected"]
    kinds = [key for key in ("text", "unchanged", "discard") if key in expected]
    assert len(kinds) == 1, f"[expected] needs exactly one of text/unchanged/discard, got {kinds}"
    if "text" in expected:
        return expected["text"]
    if "unchanged" in expected:
        assert expected["unchanged"] is True
        return raw
    assert expected["discard"] is True
    return ""


def test_golden_cases_exist() -> None:
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} golden cases under {GOLDEN_DIR}"


@pytest.mark.parametrize(
    "path", CASES, ids=[str(path.relative_to(GOLDEN_DIR).with_suffix("")) for path in CASES]
)
def test_golden(path: Path) -> None:
    case = _load(path)
    assert case["description"].strip()
    context = case["context"]
    assert context["filepath"] and context["language"]
    multiline = case.get("config", {}).get("multiline", True)
    ctx, raw = parse_marked(context["text"], multiline=multiline)
    assert postprocess(raw, ctx) == _expected(case, raw)
