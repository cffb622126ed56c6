"""What hiding the model's unsure answers would cost a typist (``bench idle``): from a run
(best one that hid nothing, ``--min-confidence 0``), the model's answers below each threshold
and the characters the user accepted from them, split by the key they followed."""

from __future__ import annotations

from typing import Any, Protocol

from ..confidence import first_line_confidence

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)
"""The ``completion.min_confidence`` values tabled."""


class _Asked(Protocol):
    kind: str
    cached: bool
    text: str
    confidence: float | None
    unsure: bool


def answer_confidence(recent: dict[str, Any], before: list[_Asked]) -> float | None:
    """The confidence of the answer a request got (``recent``: the server's record of it):
    its own first line's, or for an answer from the suggestion cache the last model answer's
    in ``before`` (the requests before it, in order)."""
    if not recent.get("cached"):
        return first_line_confidence(recent.get("token_probs", []),
                                     recent.get("first_line_tokens", 0))
    return next((k.confidence for k in reversed(before) if not k.cached and k.text), None)


def _answered(key: _Asked) -> bool:
    """The model answered the request: shown, or hidden as unsure."""
    return not key.cached and (bool(key.text) or key.unsure)


def hiding(keys: list[_Asked], accepted: list[tuple[int, float | None]]) -> dict[str, Any]:
    """Per threshold: the model's answers (shown, or hidden as unsure by the run's own
    setting) below it, all, after Enter and mid-line, and the characters accepted from
    suggestions that came from them."""
    out: dict[str, Any] = {}
    for threshold in THRESHOLDS:
        below = [k for k in keys if _answered(k) and k.confidence is not None
                 and k.confidence < threshold]
        out[f"{threshold:g}"] = {
            "hidden": len(below),
            "enter": sum(k.kind == "enter" for k in below),
            "mid": sum(k.kind == "mid" for k in below),
            "accepted_lost": sum(n for n, c in accepted if c is not None and c < threshold),
        }
    out["answers"] = sum(1 for k in keys if _answered(k))
    out["known"] = sum(1 for k in keys if _answered(k) and k.confidence is not None)
    return out


def hiding_report(summaries: dict[str, dict[str, Any]]) -> str:
    """For each run whose answers carried the model's probabilities: what each threshold
    would hide, and the accepted characters it would cost."""
    lines = []
    for name, summary in summaries.items():
        table = summary.get("hiding", {})
        if not table.get("known"):
            continue
        lines.append(f"{name}: of {table['answers']} model answers, those below (after Enter,"
                     " mid-line) and the accepted characters they gave:")
        lines += [f"  {t:>4}: {table[t]['hidden']:>3} ({table[t]['enter']}, {table[t]['mid']}),"
                  f" {table[t]['accepted_lost']} of {summary['accepted_chars']} characters"
                  for t in (f"{x:g}" for x in THRESHOLDS)]
    return "\n".join(lines)
