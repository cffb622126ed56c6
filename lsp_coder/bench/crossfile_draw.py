"""Which cases a ``bench crossfile`` run asks: a seeded draw per family of languages, each
language spread through its family, or the cases of an earlier run again (``--cases-from``);
a stopped run's answers to go on from (``--resume``); runs pooled, or left with the cases a
filter run missed (``--summarize``, ``--missed-by``)."""

from __future__ import annotations

import argparse
import itertools
from operator import attrgetter, itemgetter
from typing import Any

from .crossfile_cases import CrossCase, select
from .crossfile_sources import family

PLACE = ("source", "path", "line", "offset")
"""The fields that find a case again (its ``expected`` then tells whether it is the same)."""

place_of = attrgetter(*PLACE)
"""A case's place."""

listed_place = itemgetter(*PLACE)
"""The place of a case as a run's JSON lists it."""


def how_drawn(args: argparse.Namespace, earlier: dict[str, Any] | None) -> dict[str, Any]:
    """The recipe and ``first_use`` of a run: as given, else the earlier run's (its JSON,
    ``--cases-from``), else the defaults (blank lines, every use)."""
    earlier = earlier or {}
    recipe = "after-dot" if args.after_dot else args.recipe or earlier.get("recipe", "blank")
    return {"recipe": recipe, "first_use": args.first_use or bool(earlier.get("first_use"))}


def cases_from(raw: dict[str, Any], pool: list[CrossCase]) -> list[CrossCase]:
    """The cases an earlier run's JSON (``raw``) lists, in its order, found again in ``pool``;
    ValueError for one that is not there (another version of its package, or a
    ``--recipe``/``--first-use`` given other than that run's)."""
    by_place = {place_of(c): c for c in pool}
    cases = []
    for entry in raw["cases"]:
        case = by_place.get(listed_place(entry))
        if case is None or case.expected != entry["expected"]:
            raise ValueError(f"{entry['path']}:{entry['line'] + 1} of the earlier run is not a"
                             " case here (another version of its package, or other flags)")
        cases.append(case)
    return cases


def resumed(done: dict[str, Any], cases: list[CrossCase],
            runs: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The answers a stopped run (``done``, its JSON) gave to the cases every one of its runs
    answered, by run, to go on from; ValueError unless it asked the runs ``runs`` and those
    cases are the first of ``cases`` (drawn here as it drew them)."""
    if sorted(done["answers"]) != sorted(runs):
        raise ValueError(f"the stopped run asked {', '.join(done['answers']) or 'no run'},"
                         f" not {', '.join(runs)}")
    finished = min((len(a) for a in done["answers"].values()), default=0)
    if finished > len(cases):
        raise ValueError(f"the stopped run finished {finished} cases, more than the"
                         f" {len(cases)} drawn here (--cases)")
    if any(listed_place(entry) != place_of(case) or entry["expected"] != case.expected
           for entry, case in zip(done["cases"][:finished], cases)):
        raise ValueError("the stopped run's cases are not the first drawn here (another"
                         " version of a package, or other flags)")
    return {name: answers[:finished] for name, answers in done["answers"].items()}


def _key(case: dict[str, Any]) -> tuple:
    """What makes a listed case the same case in another run: its place and its line."""
    return (*listed_place(case), case["expected"])


def _distinct(raws: list[dict[str, Any]], names: list[str] | None = None
              ) -> tuple[list[tuple[dict[str, Any], int]], int]:
    """Each JSON's cases that every run of ``names`` (default: all of its runs) answered, in
    turn, as (JSON, index), a case drawn again (the same place and line) kept the first time;
    and how many were drawn again."""
    kept: list[tuple[dict[str, Any], int]] = []
    seen, again = set(), 0
    for raw in raws:
        answers = raw.get("answers", {})  # a list of cases made by hand has none
        runs = [answers[name] for name in (answers if names is None else names)]
        finished = min((len(run) for run in runs), default=len(raw["cases"]))
        for i, case in enumerate(raw["cases"][:finished]):
            key = _key(case)
            if key in seen:
                again += 1
            else:
                seen.add(key)
                kept.append((raw, i))
    return kept, again


def _recipe(raws: list[dict[str, Any]], doing: str) -> str | None:
    """The recipe the JSONs share (None when none records one); ValueError when they differ."""
    recipes = {r["recipe"] for r in raws if r.get("recipe")}
    if len(recipes) > 1:
        raise ValueError(f"runs of different recipes do not {doing}:"
                         f" {', '.join(sorted(recipes))}")
    return next(iter(recipes), None)


def pooled(raws: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """Several runs' JSONs (other seeds, or one run in parts) as one: the runs they all asked,
    each JSON's cases every one of those runs answered, in turn, a case drawn again (the same
    place and line) kept once with its first answers; and a line saying what was pooled.
    ValueError when they share no run or their recipes differ."""
    names = [name for name in raws[0]["answers"] if all(name in r["answers"] for r in raws)]
    if not names:
        raise ValueError("the runs share no run to compare ("
                         + "; ".join(", ".join(r["answers"]) or "none" for r in raws) + ")")
    recipe = _recipe(raws, "pool")
    kept, again = _distinct(raws, names)
    cases = [raw["cases"][i] for raw, i in kept]
    answers = {name: [{**raw["answers"][name][i], "case": n} for n, (raw, i) in enumerate(kept)]
               for name in names}
    seeds = ", ".join(str(r.get("seed", "?")) for r in raws)
    said = (f"{len(raws)} runs pooled (seeds {seeds}, recipe {recipe or 'not recorded'}):"
            f" {len(cases)} cases"
            + (f", {again} drawn again counted once" if again else ""))
    return {"cases": cases, "answers": answers, "recipe": recipe}, said


def earlier_cases(raws: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``--cases-from`` takes of one or several earlier runs' JSONs: their cases every
    run of each answered, a case drawn again once (as ``pooled`` counts them), the packages
    those come from in the order first listed, their recipe and ``first_use``, the first
    one's seed and the filters that left their cases (a recipe or seed no JSON records is
    left out, so the defaults apply as for one such JSON). ValueError when their recipes or
    ``first_use`` differ."""
    recipe = _recipe(raws, "run together")
    if len({bool(r.get("first_use")) for r in raws}) > 1:
        raise ValueError("runs with and without --first-use do not run together")
    kept, _ = _distinct(raws)
    cases = [raw["cases"][i] for raw, i in kept]
    used = {case["source"] for case in cases}
    sources = [name for name in dict.fromkeys(n for raw in raws for n in raw.get("sources", []))
               if name in used]
    recorded = {"seed": raws[0].get("seed"), "recipe": recipe}
    return {"sources": sources, **{k: v for k, v in recorded.items() if v is not None},
            "first_use": bool(raws[0].get("first_use")),
            "filter": "; ".join(f for f in dict.fromkeys(r.get("filter", "") for r in raws) if f),
            "cases": cases}


def missed_by(raw: dict[str, Any], filter_raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``raw`` (a run's JSON, or runs pooled) with only the cases the filter run
    (``filter_raw``: one run, of a small model with the file alone, on these cases) answered
    and did not get exactly, CrossCodeEval's second filter on runs already made; and a line
    saying what was kept. ValueError unless the filter run asked exactly one run."""
    if len(filter_raw["answers"]) != 1:
        raise ValueError("the filter run must ask one run, not "
                         + (", ".join(filter_raw["answers"]) or "none"))
    (filter_answers,) = filter_raw["answers"].values()
    got = {_key(case): answer["exact"]
           for case, answer in zip(filter_raw["cases"], filter_answers)}
    finished = min((len(run) for run in raw["answers"].values()), default=0)
    verdicts = [got.get(_key(case)) for case in raw["cases"][:finished]]
    keep = [i for i, verdict in enumerate(verdicts) if verdict is False]
    cases = [raw["cases"][i] for i in keep]
    answers = {name: [{**run[i], "case": n} for n, i in enumerate(keep)]
               for name, run in raw["answers"].items()}
    unasked = verdicts.count(None)
    said = (f"{len(keep)} of {finished} cases kept, those the filter run missed with the file"
            f" alone ({verdicts.count(True)} it got exactly left out"
            + (f", {unasked} it did not ask" if unasked else "") + ")")
    return {**raw, "cases": cases, "answers": answers}, said


def select_by_family(pool: list[CrossCase], count: int, seed: int,
                     per_file: int) -> list[CrossCase]:
    """``select``'s ``count`` cases of each family of languages in ``pool`` (Python;
    JavaScript and TypeScript together), the families in turn (Python first) and a family's
    languages spread evenly through it, so a run stopped early has cases of each language
    in about the share the whole run has."""
    families: dict[str, list[CrossCase]] = {}
    for case in pool:
        families.setdefault(family(case.language), []).append(case)
    drawn = [spread(select(families[f], count, seed, per_file))
             for f in sorted(families, key=lambda f: f != "python")]
    return [c for turn in itertools.zip_longest(*drawn) for c in turn if c is not None]


def spread(cases: list[CrossCase]) -> list[CrossCase]:
    """``cases`` with each language's cases, in their order, spread evenly through the list
    (a language with a third of them: every third case)."""
    by_language: dict[str, list[CrossCase]] = {}
    for case in cases:
        by_language.setdefault(case.language, []).append(case)
    placed = [((i + 0.5) / len(group), n, case) for n, group in enumerate(by_language.values())
              for i, case in enumerate(group)]
    return [case for *_, case in sorted(placed, key=lambda p: p[:2])]
