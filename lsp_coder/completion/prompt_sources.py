"""The pieces of one request's prompt, gathered for the budget the backend picks.

The service names the sources (the document around the cursor, the open file's import lines,
the other files' section); the backend decides the budget (the settings', scaled to a local KV
cache) and fits what is gathered to it exactly, in one place per backend. A source gathers by
an estimate (``CHARS_PER_TOKEN``) only so that no more text than can fit is read.
"""

from __future__ import annotations

from dataclasses import replace

from ..config import Config
from ..shared_types import PromptBudget, PromptParts
from .context import split_document
from .records import CompletionRequest
from .related import RelatedContext
from .related.import_head import import_head
from .related.text import uri_to_path


def settings_budget(config: Config) -> PromptBudget:
    """The prompt's token budgets as the settings give them."""
    cc = config.completion
    return PromptBudget(prefix=cc.prefix_tokens, suffix=cc.suffix_tokens,
                        extra=config.context.budget_tokens)


class DocumentSources:
    """What a request at ``req`` can show the model (a ``PromptSources``; worker thread).

    ``record``: the other files' section is remembered as the document's (False for a preview
    by idle work, see ``RelatedContext.section``).
    """

    def __init__(self, req: CompletionRequest, config: Config, related: RelatedContext,
                 record: bool = True) -> None:
        self._req = req
        self._config = config
        self._related = related
        self._record = record
        self._last: tuple[PromptBudget, PromptParts] | None = None

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
            start = req.offset - len(parts.line_prefix) - len(parts.recent) - len(parts.above)
            parts = replace(parts, imports=import_head(req.text, start, uri_to_path(req.uri),
                                                       req.language_id))
        section = self._related.section(req.uri, req.text, req.offset, budget.extra, config,
                                        record=self._record, window_lines=window)
        parts = replace(parts, extra=section.entries, repo=section.repo, path=section.path)
        self._last = (budget, parts)
        return parts
