"""The pieces of one request's prompt, gathered for the budget the backend picks.

The service names the sources (the document around the cursor, the open file's import lines,
the other files' section, the ranges the user visited in other documents, the user's recent
edits); the backend decides the budget (the
settings', scaled to a local KV cache) and fits what is gathered to it exactly, in one place
per backend. A source gathers by an estimate (``CHARS_PER_TOKEN``) only so that no more text
than can fit is read.
"""

from __future__ import annotations

from dataclasses import replace

from ..config import Config
from ..prompt_parts import PromptBudget, PromptParts
from .context import CHARS_PER_TOKEN, split_document
from .recent_edits import RecentEdits
from .records import CompletionRequest
from .related import RelatedContext, Section
from .related.import_head import import_heads
from .related.text import uri_to_path


def settings_budget(config: Config) -> PromptBudget:
    """The prompt's token budgets as the settings give them."""
    cc = config.completion
    return PromptBudget(prefix=cc.prefix_tokens, suffix=cc.suffix_tokens,
                        extra=config.context.budget_tokens + edits_tokens(config)
                        + visits_tokens(config))


def edits_tokens(config: Config) -> int:
    """The settings' tokens for recent edits (0 when they are off)."""
    context = config.context
    return context.recent_edits_tokens if context.recent_edits else 0


def visits_tokens(config: Config) -> int:
    """The settings' tokens for visited ranges (0 when they are off)."""
    context = config.context
    return context.visited_ranges_tokens if context.visited_ranges else 0


def split_extra(extra: int, config: Config) -> tuple[int, int, int]:
    """(the other files' section, recent edits, visited ranges) shares of ``extra`` other-files
    tokens, in the settings' proportion (a backend may have scaled ``extra`` down)."""
    edits, visits = edits_tokens(config), visits_tokens(config)
    total = config.context.budget_tokens + edits + visits
    edit_share = extra * edits // total if total > 0 else 0
    visit_share = extra * visits // total if total > 0 else 0
    return extra - edit_share - visit_share, edit_share, visit_share


class DocumentSources:
    """What a request at ``req`` can show the model (a ``PromptSources``; worker thread).

    ``record``: the other files' section is remembered as the document's (False for a preview
    by idle work, see ``RelatedContext.section``). ``edits``: the session's recent edits and
    their visited ranges (``RecentEdits.visits``; none: neither shown). ``first_answer``: an
    answer at the cursor whose names the section looks up too (``context.second_pass``).
    """

    def __init__(self, req: CompletionRequest, config: Config, related: RelatedContext,
                 record: bool = True, edits: RecentEdits | None = None,
                 first_answer: str = "") -> None:
        self._req = req
        self._config = config
        self._related = related
        self._edits = edits
        self._record = record
        self._first_answer = first_answer
        self._last: tuple[PromptBudget, PromptParts] | None = None

    @property
    def gathered(self) -> tuple[PromptBudget, PromptParts] | None:
        """The last budget gathered for and its pieces (None before any)."""
        return self._last

    def gather(self, budget: PromptBudget) -> PromptParts:
        """The pieces within ``budget`` (the same pieces again for the same budget: the
        section is recorded once)."""
        if self._last is not None and self._last[0] == budget:
            return self._last[1]
        req, config = self._req, self._config
        cc = config.completion
        parts = split_document(req.text, req.offset, prefix_tokens=budget.prefix,
                               suffix_tokens=budget.suffix, recent_lines=cc.recent_lines)
        window = (parts.above.count("\n") + parts.recent.count("\n"), parts.suffix.count("\n"))
        if config.context.imports:
            line_start = req.offset - len(parts.line_prefix)
            start = line_start - len(parts.recent) - len(parts.above)
            path = uri_to_path(req.uri)
            imports, head_imports = import_heads(req.text, (start, line_start), path,
                                                 req.language_id)
            parts = replace(parts, imports=imports, head_imports=head_imports)
        section_tokens, edit_tokens, visit_tokens = split_extra(budget.extra, config)
        section = self._related.section(req.uri, req.text, req.offset, section_tokens, config,
                                        record=self._record, window_lines=window,
                                        first_answer=self._first_answer)
        edits = self._recent_edits(window, edit_tokens)
        visits = self._visited_ranges(visit_tokens, section.entries + edits)
        repo, path = section.repo, section.path
        if (visits or edits) and not section.entries:
            repo, path = self._related.place(req.uri)
        # Visits, then edits, go last, nearest the open file: the section before them stays
        # cached when a visit or an edit elsewhere finishes, and the model reads the newest
        # code nearest its own.
        members = self._related.members(req.uri, req.text, req.offset, config)
        parts = replace(parts, extra=section.entries + visits + edits, repo=repo, path=path,
                        held_extra=self._held(section, section_tokens, visits + edits),
                        members=members)
        self._last = (budget, parts)
        return parts

    def _held(self, section: Section, tokens: int,
              after: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...] | None:
        """The other-files part with the section of the prompt the document's last request
        read in place of ``section``, where the two differ (``PromptParts.held_extra``);
        None for a second pass, which is asked for its new names."""
        if self._first_answer or not section.entries:
            return None
        held = self._related.held(self._req.uri, tokens, self._config)
        if held is None or held.entries == section.entries:
            return None
        return held.entries + after

    def _recent_edits(self, window: tuple[int, int], tokens: int) -> tuple[tuple[str, str], ...]:
        """The file entries of the session's recent edits within ``tokens`` (none of the
        open document's lines ``window`` around the cursor shows)."""
        if self._edits is None or tokens <= 0 or not self._config.context.recent_edits:
            return ()
        req, related = self._req, self._related
        line = req.text.count("\n", 0, req.offset)
        return self._edits.entries(
            req.uri, (line - window[0], line + window[1]),
            self._config.context.recent_edits_max, tokens * CHARS_PER_TOKEN,
            shown=lambda uri: related.place(uri)[1], allowed=related.exclusion.allows_uri)

    def _visited_ranges(self, tokens: int, others: tuple[tuple[str, str], ...]
                        ) -> tuple[tuple[str, str], ...]:
        """The file entries of the ranges the user visited in other documents, within
        ``tokens``, but for ranges an entry of ``others`` (the section's, the edits') shows
        whole (the model would read them twice)."""
        if self._edits is None or tokens <= 0 or not self._config.context.visited_ranges:
            return ()
        related = self._related
        return self._edits.visits.entries(
            self._req.uri, self._config.context.visited_ranges_max, tokens * CHARS_PER_TOKEN,
            shown=lambda uri: related.place(uri)[1], allowed=related.exclusion.allows_uri,
            elsewhere=lambda path, text: any(p == path and text in t for p, t in others))
