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


def pooled(raws: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """Several runs' JSONs (other seeds, or one run in parts) as one: the runs they all asked,
    each JSON's cases every one of those runs answered, in turn, a case drawn again (the same
    place and line) kept once with its first answers; and a line saying what was pooled.
    ValueError when they share no run or their recipes differ."""
    names = [name for name in raws[0]["answers"] if all(name in r["answers"] for r in raws)]
    if not names:
        raise ValueError("the runs share no run to compare ("
                         + "; ".join(", ".join(r["answers"]) or "none" for r in raws) + ")")
    recipes = {r["recipe"] for r in raws if r.get("recipe")}
    if len(recipes) > 1:
        raise ValueError(f"runs of different recipes do not pool: {', '.join(sorted(recipes))}")
    cases: list[dict[str, Any]] = []
    answers: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    seen, again = set(), 0
    for raw in raws:
        finished = min(len(raw["answers"][name]) for name in names)
        for i, case in enumerate(raw["cases"][:finished]):
            key = (*listed_place(case), case["expected"])
            if key in seen:
                again += 1
                continue
            seen.add(key)
            for name in names:
                answers[name].append({**raw["answers"][name][i], "case": len(cases)})
            cases.append(case)
    seeds = ", ".join(str(r.get("seed", "?")) for r in raws)
    recipe = next(iter(recipes), None)
    said = (f"{len(raws)} runs pooled (seeds {seeds}, recipe {recipe or 'not recorded'}):"
            f" {len(cases)} cases"
            + (f", {again} drawn again counted once" if again else ""))
    return {"cases": cases, "answers": answers, "recipe": recipe}, said


def missed_by(raw: dict[str, Any], filter_raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``raw`` (a run's JSON, or runs pooled) with only the cases the filter run
    (``filter_raw``: one run, of a small model with the file alone, on these cases) answered
    and did not get exactly, CrossCodeEval's second filter on runs already made; and a line
    saying what was kept. ValueError unless the filter run asked exactly one run."""
    if len(filter_raw["answers"]) != 1:
        raise ValueError("the filter run must ask one run, not "
                         + (", ".join(filter_raw["answers"]) or "none"))
    (filter_answers,) = filter_raw["answers"].values()
    got = {(*listed_place(case), case["expected"]): answer["exact"]
           for case, answer in zip(filter_raw["cases"], filter_answers)}
    finished = min((len(run) for run in raw["answers"].values()), default=0)
    verdicts = [got.get((*listed_place(case), case["expected"]))
                for case in raw["cases"][:finished]]
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
        families.setdefault("python" if case.language == "python" else "js", []).append(case)
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
