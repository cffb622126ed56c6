"""A second pass by the names of the first answer (``context.second_pass``).

RepoCoder retrieves with the code the model just wrote, then writes again: the cursor often
sits before the name it needs (the other file's name is not typed yet), so the names around
the cursor cannot find its definition, while the first answer names it. Here the other files'
section looks the first answer's names up as if they were typed; when that adds code the
first prompt did not show, the model answers again from the new section, with the first
answer as the speculative hint (verified, not trusted). The second pass keeps the request's
time box: it starts only before the box runs out, and the box's early answer (the complete
lines so far) may come from it.
"""

from __future__ import annotations

from dataclasses import replace

from ..backends.base import Backend
from ..config import Config
from ..shared_types import BackendResult, FimQuery, RequestStats
from .prompt_sources import DocumentSources
from .recent_edits import RecentEdits
from .records import CompletionRequest
from .related import RelatedContext

ADDED_UP = ("evaluated_tokens", "generated_tokens", "prefill_ms", "decode_ms", "decode_steps",
            "known_tokens", "near_ties")
"""The figures of the second answer's stats that count both passes' work."""


def answer_again(backend: Backend, query: FimQuery, first: BackendResult, first_text: str,
                 req: CompletionRequest, config: Config, related: RelatedContext,
                 edits: RecentEdits | None) -> tuple[BackendResult, FimQuery] | None:
    """The answer to ``query`` from a section that also holds the definitions its first
    answer (``first``; ``first_text`` as the filters left it) names, and the query it
    answers; None when they add nothing to the section ``query`` was answered from, or its
    prompt was not gathered here."""
    gathered = query.sources.gathered if isinstance(query.sources, DocumentSources) else None
    if gathered is None or not first_text.strip() or query.cancelled():
        return None
    budget, parts = gathered
    sources = DocumentSources(req, config, related, edits=edits, first_answer=first_text)
    if sources.gather(budget).extra == parts.extra:
        return None
    second = replace(query, sources=sources, hint=first_text)
    again = backend.complete(second)
    if again.stats is not None:
        before = first.stats or RequestStats()
        for name in ADDED_UP:
            setattr(again.stats, name, getattr(again.stats, name) + getattr(before, name))
        again.stats.second_pass = True
    return again, second
