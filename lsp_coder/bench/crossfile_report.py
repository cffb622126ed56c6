"""``bench crossfile``'s answers and what it prints and draws of them: per run, the exact
first lines, edit similarity, the share naming the used name, latency and prompt tokens, and
each run against in-file only and against the run less its last switch."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bootstrap import Interval, paired
from .crossfile_sources import LANGUAGES
from .figures import pyplot, save

METRICS = (("exact", "exact", 100.0), ("edit sim", "edit_similarity", 1.0),
           ("id exact", "identifier_exact", 100.0), ("id F1", "identifier_f1", 1.0),
           ("names it", "uses_name", 100.0))
"""The per-language table's columns: heading, Answer field, scale to percent."""


@dataclass(slots=True)
class Answer:
    """One case's completion in one run."""

    case: int
    """The case's index in the run's case list."""
    suggestion: str
    """What the server answered (all of it)."""
    exact: bool
    """The first line is the blanked line."""
    edit_similarity: float
    """0-100, of the first line against the blanked line."""
    uses_name: bool
    """The first line names the used name."""
    latency_ms: float
    """From the request to its answer, at the client."""
    prompt_tokens: int
    """The request's prompt size (0 when no engine request answered it)."""
    short_prompt: bool
    """The short prompt for a cold cache answered it (``idle.cold_prompt_ms``)."""
    identifier_exact: bool = False
    """The first line's identifiers are the expected ones, in order (CrossCodeEval's
    identifier exact match)."""
    identifier_f1: float = 0.0
    """0-100, F1 of the first line's identifiers against the expected ones."""
    second_pass: bool = False
    """A second pass by the first answer's names answered it (``context.second_pass``)."""
    token_probs: list[float | None] = field(default_factory=list)
    """The model's probability of each generated token (the server's record; None: not
    known)."""
    first_line_tokens: int = 0
    """How many of those tokens make the first line."""
    evaluated_tokens: int = 0
    """Prompt tokens the engine read for it (those its KV cache lacked)."""
    prefill_ms: float = 0.0
    """How long reading them took."""


def answered(index: int, suggestion: str, latency_ms: float, recent: dict[str, Any], *,
             exact: bool, edit_similarity: float, uses_name: bool,
             identifier: tuple[bool, float] = (False, 0.0)) -> Answer:
    """The ``Answer`` to case ``index`` scored so, with what the server recorded of its
    request (``recent``: the stats of the status command's last request)."""
    return Answer(index, suggestion, exact, edit_similarity, uses_name, latency_ms,
                  recent.get("prompt_tokens", 0), bool(recent.get("short_prompt")),
                  *identifier, second_pass=bool(recent.get("second_pass")),
                  token_probs=recent.get("token_probs", []),
                  first_line_tokens=recent.get("first_line_tokens", 0),
                  evaluated_tokens=recent.get("evaluated_tokens", 0),
                  prefill_ms=recent.get("prefill_ms", 0.0))


JS_FAMILY = frozenset(LANGUAGES["js"])
"""The languages of the family ``--cases`` counts as one (and issue 46's targets)."""


PREFILL_SPEED_MIN_TOKENS = 256
"""Only requests that read at least this many prompt tokens tell the machine's prefill speed
(a few tokens' time is mostly overhead)."""


def prefill_ms_per_token(answers: list[Answer]) -> float:
    """The prefill time per prompt token of the requests that read enough to tell (0 when
    none did, or the record has no timings)."""
    long = [a for a in answers if a.evaluated_tokens >= PREFILL_SPEED_MIN_TOKENS]
    tokens = sum(a.evaluated_tokens for a in long)
    return sum(a.prefill_ms for a in long) / tokens if tokens else 0.0


def summarize(answers: list[Answer]) -> dict[str, float]:
    n = max(1, len(answers))
    return {
        "cases": len(answers),
        "exact": sum(a.exact for a in answers),
        "exact_rate": sum(a.exact for a in answers) / n,
        "edit_similarity": sum(a.edit_similarity for a in answers) / n,
        "uses_name_rate": sum(a.uses_name for a in answers) / n,
        "latency_p50_ms": statistics.median(a.latency_ms for a in answers) if answers else 0.0,
        "prompt_tokens_p50": (statistics.median(a.prompt_tokens for a in answers)
                              if answers else 0.0),
        "short_prompts": sum(a.short_prompt for a in answers),
        "second_passes": sum(a.second_pass for a in answers),
        "prefill_ms_per_token": prefill_ms_per_token(answers),
    }


def table(summaries: dict[str, dict[str, float]]) -> str:
    head = (f"{'run':<22}{'exact':>12}{'edit sim':>10}{'names it':>10}{'latency p50':>13}"
            f"{'prompt tok':>12}{'short':>7}{'2nd':>5}")
    lines = [head]
    for name, s in summaries.items():
        lines.append(f"{name:<22}{s['exact']:>5.0f}/{s['cases']:<3.0f}({s['exact_rate']:3.0%})"
                     f"{s['edit_similarity']:>9.1f}{s['uses_name_rate']:>10.0%}"
                     f"{s['latency_p50_ms']:>10.0f} ms{s['prompt_tokens_p50']:>12.0f}"
                     f"{s['short_prompts']:>7.0f}{s['second_passes']:>5.0f}")
    for name, s in summaries.items():
        base_name = in_file_run(name, summaries)
        if base_name is None:
            continue
        base = summaries[base_name]
        ratio = (f"x{s['exact'] / base['exact']:.2f}" if base["exact"]
                 else f"{s['exact']:.0f} vs none")
        lines.append(f"{name} vs {base_name}: exact {ratio}, edit similarity"
                     f" {s['edit_similarity'] - base['edit_similarity']:+.1f}")
    speeds = [f"{name} {s['prefill_ms_per_token']:.1f}" for name, s in summaries.items()
              if s.get("prefill_ms_per_token")]
    if speeds:  # latencies compare only on machines that read prompts alike
        lines.append("prefill on this machine, ms a prompt token: " + "; ".join(speeds))
    return "\n".join(lines)


def in_file_run(name: str, runs: dict[str, dict[str, float]]) -> str | None:
    """The run ``name`` is compared with: in-file only with the same variants
    (``all+full`` against ``in-file+full``), else plain ``in-file``; None for an in-file run
    or when there is none."""
    source, _, variants = name.partition("+")
    if source == "in-file":
        return None
    same = f"in-file+{variants}" if variants else "in-file"
    return same if same in runs else "in-file" if "in-file" in runs else None


def without_switch_run(name: str, runs: dict[str, dict[str, float]]) -> str | None:
    """The run ``name`` is also compared with: the same run less its last variant
    (``all+full+last`` against ``all+full``, ``all+full+oracle`` against ``all+full``), when
    there is one and it is not the in-file run ``name`` is compared with already."""
    less, plus, _last = name.rpartition("+")
    if not plus or less not in runs or less == in_file_run(name, runs):
        return None
    return less


def plot(summaries: dict[str, dict[str, float]], path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    names = list(summaries)
    fig, ax = plt.subplots(figsize=(8, 4))
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [100 * summaries[n]["exact_rate"] for n in names], 0.4,
           label="exact line (%)")
    ax.bar([x + 0.2 for x in xs], [summaries[n]["edit_similarity"] for n in names], 0.4,
           label="edit similarity")
    ax.set_xticks(list(xs), names)
    ax.set_ylim(0, 100)
    ax.set_title("lsp-coder: cross-file lines by context source")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    save(plt, fig, path)
    return True


def language_tables(languages: list[str], answers: dict[str, list[Answer]]) -> str:
    """Per language (``languages``: each case's), each run's exact match, edit similarity,
    identifier exact match and F1 and share naming the name, with 95 % intervals from a
    paired bootstrap over the cases; then each run against in-file only and against the same
    run less its last switch (``without_switch_run``): the difference of each metric and the
    ratio of exact matches, with their intervals. JavaScript and TypeScript, both there, get
    a table together too: issue 46 and ``--cases`` count them as one family."""
    out = []
    groups = [(language, {language}) for language in sorted(set(languages))]
    if JS_FAMILY <= set(languages):
        groups.append((" and ".join(sorted(JS_FAMILY)), JS_FAMILY))
    for label, members in groups:
        picked = [i for i, lang in enumerate(languages) if lang in members]
        runs = {name: [run[i] for i in picked if i < len(run)] for name, run in answers.items()}
        runs = {name: run for name, run in runs.items() if len(run) == len(picked)}
        if not runs:
            continue
        out.append(f"{label}, {len(picked)} cases (95 % intervals, paired bootstrap over"
                   " cases)")
        out.append(f"{'run':<22}" + "".join(f"{head:>22}" for head, _f, _s in METRICS))
        for name, run in runs.items():
            cells = [paired(*[_values(run, attribute, scale)] * 2).base
                     for _h, attribute, scale in METRICS]
            out.append(f"{name:<22}" + "".join(f"{_cell(c):>22}" for c in cells))
        named = {n: {} for n in runs}
        for name, run in runs.items():
            for base_name in (in_file_run(name, named), without_switch_run(name, named)):
                if base_name is not None:
                    out.append(f"  {name} vs {base_name}: {_against(runs[base_name], run)}")
    return "\n".join(out)


def _against(base: list[Answer], run: list[Answer]) -> str:
    """Each metric's difference from ``base`` to ``run`` and the ratio of exact matches,
    with their paired-bootstrap intervals."""
    parts = []
    for head, attribute, scale in METRICS:
        result = paired(_values(base, attribute, scale), _values(run, attribute, scale))
        parts.append(f"{head} {_cell(result.difference, True)}")
        if attribute == "exact":
            parts.append(f"exact x{_cell(result.ratio, ratio=True)}")
    return "; ".join(parts)


def _values(run: list[Answer], attribute: str, scale: float) -> list[float]:
    return [float(getattr(a, attribute)) * scale for a in run]


def _cell(interval: Interval, signed: bool = False, ratio: bool = False) -> str:
    """``12.3 [8.0, 16.7]``; a ratio with two decimals, ``-`` for an undefined one."""
    if math.isnan(interval.value):
        return "- (no in-file exact)"
    digits = 2 if ratio else 1
    sign = "+" if signed else ""
    low = "?" if math.isnan(interval.low) else f"{interval.low:{sign}.{digits}f}"
    high = "?" if math.isnan(interval.high) else f"{interval.high:{sign}.{digits}f}"
    return f"{interval.value:{sign}.{digits}f} [{low}, {high}]"


def report_json(raw: dict) -> str:
    """The tables of a run's ``crossfile.json`` (one stopped early: the cases every run
    answered)."""
    return report_tables(*answers_of(raw))


def report_tables(languages: list[str], answers: dict[str, list[Answer]]) -> str:
    """The table of all cases, then the per-language tables (``languages``: each case's)."""
    summaries = {name: summarize(run) for name, run in answers.items()}
    return f"{table(summaries)}\n\n{language_tables(languages, answers)}"


def answers_of(raw: dict) -> tuple[list[str], dict[str, list[Answer]]]:
    """The languages of the cases of a run's ``crossfile.json`` that every run answered,
    and each run's answers to them, identifier match scored again from the suggestions (a
    JSON older than it)."""
    from .scoring import identifier_match

    answers = {name: [Answer(**a) for a in run] for name, run in raw["answers"].items()}
    done = min((len(run) for run in answers.values()), default=0)
    cases = raw["cases"][:done]
    languages = [c.get("language", "python") for c in cases]
    for run in answers.values():
        del run[done:]
        for answer, case, language in zip(run, cases, languages):
            answer.identifier_exact, answer.identifier_f1 = identifier_match(
                answer.suggestion, case["expected"], language)
    return languages, answers
