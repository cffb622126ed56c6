"""One ``bench crossfile`` case in one run: the run's settings (``run_options``), the tabs the
client opens, the client's steps with a fresh workspace and server, and the scored answer
(see ``crossfile`` for the runs and the recipes)."""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from ..client.session import Session
from ..completion.related.pinned import pinned_tokens
from ..completion.related.tags import language_of
from ..config import ContextConfig
from .crossfile_cases import CrossCase, Source, make_workspace
from .crossfile_names import CROSSFILE_SOURCES
from .crossfile_report import Answer, answered
from .crossfile_sources import definition_rows, oracle
from .scoring import edit_similarity, exact, identifier_match, uses_name


def run_options(name: str, base: dict[str, Any]) -> dict[str, Any]:
    """The initializationOptions of run ``name`` (see ``crossfile``'s docstring)."""
    source, *variants = name.split("+")
    if source not in ("in-file", "all", *CROSSFILE_SOURCES) or not all(
            v in ("full", "first", "imports", "noimports", "oracle", "last", "second",
                  "visited", "unused", "nounused", "members", "nomembers")
            or (v.startswith("cold") and v[4:].isdigit())
            or (v.startswith("recent") and v[6:].isdigit()) for v in variants):
        raise ValueError(f"unknown --sources run {name!r}")
    options = {section: dict(values) for section, values in base.items()}
    context = options.setdefault("context", {})
    for switch in CROSSFILE_SOURCES:
        context[switch] = source in (switch, "all")
    if source == "in-file":
        context["budget_tokens"] = 0
        context["known_members"] = False  # what other files define is not in-file
    idle = options.setdefault("idle", {})
    for variant in variants:
        if variant == "full":
            idle["cold_prompt_ms"] = 0
        elif variant == "first":
            idle["cold_context_first"] = True
        elif variant in ("imports", "noimports"):
            context["imports"] = variant == "imports"
        elif variant == "last":
            context["relevant_last"] = True
        elif variant == "second":
            context["second_pass"] = True
        elif variant == "visited":
            context["visited_ranges"] = True
        elif variant in ("unused", "nounused"):
            context["unused_imports"] = variant == "unused"
        elif variant in ("members", "nomembers"):
            context["known_members"] = variant == "members"
        elif variant == "oracle":
            pass  # per case, in ``ask`` (``with_oracle``)
        elif variant.startswith("recent"):
            options.setdefault("completion", {})["recent_lines"] = int(variant[6:])
        else:
            idle["cold_context_tokens"] = int(variant[4:])
    return options


def tabs_for(case: CrossCase, modules: list[str], count: int, seed: int) -> list[str]:
    """The files open as tabs before the case's file: the defining module, then ``count``
    other modules of the package chosen by a seeded draw (workspace-relative paths)."""
    others = sorted(m for m in modules if m not in (case.path, case.defined_in))
    rng = random.Random(f"{seed}:{case.path}:{case.line}")
    return [case.defined_in, *rng.sample(others, min(count, len(others)))]


def with_oracle(options: dict[str, Any], case: CrossCase, root: Path) -> dict[str, Any]:
    """``options`` with the true definition of the case's name (from the workspace ``root``)
    pinned first in the section, and the section's budget raised by what it counts against it
    (``pinned_tokens``), so the sources keep the budget they had: the oracle is added to what
    the run ships, not put in its place. Unchanged when the definition is not found."""
    text = oracle(root, case)
    if not text:
        return options
    context = dict(options.get("context", {}))
    budget = context.get("budget_tokens", ContextConfig().budget_tokens)
    context["budget_tokens"] = budget + pinned_tokens(((case.defined_in, text),))
    context["pinned"] = [f"{case.defined_in}\n{text}"]
    return {**options, "context": context}


async def ask(case: CrossCase, source: Source, tabs: list[str], options: dict[str, Any],
              pause_ms: float, index: int, server_log: Path | None = None,
              highlight: bool = False, add_oracle: bool = False, visit: bool = False) -> Answer:
    """One case with a fresh workspace and server (see ``crossfile``'s docstring); the server's
    debug log is appended to ``server_log`` if given. ``highlight``: the client reports the
    cursor when the file opens; ``add_oracle``: the name's definition is pinned in the
    section (``with_oracle``); ``visit``: before the case's file, the client opens the
    defining module last and rests the cursor on the definition (``visit_definition``)."""
    with tempfile.TemporaryDirectory(prefix="lsp-coder-crossfile-") as tmp:
        root = Path(tmp)
        target = make_workspace(source, case, root)
        if add_oracle:
            options = with_oracle(options, case, root)
        session = Session(options, root=root, server_log=server_log)
        await session.start_loaded(f"case {index}")
        try:
            for tab in tabs:
                if visit and tab == case.defined_in:
                    continue
                path = root / tab
                session.open(path.as_uri(), path.read_text(encoding="utf-8"),
                             language_of(path.suffix) or case.language)
            if visit:
                await visit_definition(session, case, root)
            session.open(target.as_uri(), case.text, case.language)
            if highlight:
                await session.highlight(case.offset)
            suggestion, latency, recent = await timed_inline(session, case.offset, pause_ms)
        finally:
            await session.close()
    return answered(index, suggestion, latency, recent,
                    exact=exact(suggestion, case.expected),
                    edit_similarity=edit_similarity(suggestion, case.expected),
                    uses_name=uses_name(suggestion, case.name),
                    identifier=identifier_match(suggestion, case.expected, case.language))


async def visit_definition(session: Session, case: CrossCase, root: Path) -> None:
    """Open the case's defining module (from the workspace ``root``) and rest the cursor on
    the definition of its name, as after a go-to-definition (a highlight asked there); at the
    module's top when the definition is not found."""
    path = root / case.defined_in
    text = path.read_text(encoding="utf-8")
    found = definition_rows(root, case)
    offset = len("".join(found[0][: found[1]])) if found is not None else 0
    session.open(path.as_uri(), text, language_of(path.suffix) or case.language)
    await session.highlight(offset)


async def timed_inline(session: Session, offset: int,
                       pause_ms: float) -> tuple[str, float, dict[str, Any]]:
    """After ``pause_ms``, one inline completion at ``offset``: (the suggestion, its latency at
    the client in ms, the server's record of the request)."""
    await asyncio.sleep(pause_ms / 1000)
    sent = time.perf_counter()
    suggestion = await session.inline(offset)
    latency = (time.perf_counter() - sent) * 1000
    return suggestion, latency, (await session.stats())["recent"][-1]
