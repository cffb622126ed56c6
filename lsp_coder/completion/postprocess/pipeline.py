"""The only place that sets the order of the postprocess filters.

Two stages, named for the suggestion cache that sits between them:
`PRE_CACHE` runs once on the raw model output before it is cached, and
`POST_CACHE` runs every time a (possibly cached) suggestion is shown.

NOTE: `drop_repetition` reads `ctx.prefix` (to drop an echo of the lines above
the cursor), so a `PRE_CACHE` result belongs to the prompt that produced it;
key the cache by that prompt, not by the cursor alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from lsp_coder.completion.postprocess.base import Filter, FilterContext
from lsp_coder.completion.postprocess.closer_line import closer_line
from lsp_coder.completion.postprocess.drop_blank import drop_blank
from lsp_coder.completion.postprocess.drop_repetition import drop_repetition
from lsp_coder.completion.postprocess.drop_suffix_overlap import drop_suffix_overlap
from lsp_coder.completion.postprocess.limit_scope import limit_scope
from lsp_coder.completion.postprocess.mend_import_path import mend_import_path
from lsp_coder.completion.postprocess.trim_trailing_whitespace import trim_trailing_whitespace

log = logging.getLogger(__name__)

PRE_CACHE: tuple[Filter, ...] = (
    trim_trailing_whitespace,
    drop_repetition,
    mend_import_path,
)
"""Cheap filters on the raw model output, applied before the suggestion is cached."""

POST_CACHE: tuple[Filter, ...] = (
    limit_scope,
    drop_suffix_overlap,
    trim_trailing_whitespace,
    drop_blank,
    closer_line,
)
"""Filters that fit the suggestion to the document around the cursor, in this order."""


def run(filters: Iterable[Filter], text: str, ctx: FilterContext) -> str:
    """Applies `filters` to `text` in order.

    A filter that raises, or returns something other than a str, is skipped: the
    text goes on unchanged by it, and the error is logged. Once a filter returns
    "" (discard), the remaining filters are not run.

    Args:
        filters: the filters, in the order to apply them.
        text: the suggestion.
        ctx: the document around the cursor.

    Returns:
        The filtered suggestion; "" means discard.
    """
    for filter_ in filters:
        if not text:
            return ""
        try:
            result = filter_(text, ctx)
        except Exception:
            log.exception("postprocess filter %s failed; text left unchanged", _name(filter_))
            continue
        if not isinstance(result, str):
            kind = type(result).__name__
            log.error("postprocess filter %s returned %s; text unchanged", _name(filter_), kind)
            continue
        text = result
    return text


def postprocess(text: str, ctx: FilterContext) -> str:
    """Runs the whole pipeline, `PRE_CACHE` then `POST_CACHE`.

    Args:
        text: the raw model output.
        ctx: the document around the cursor.

    Returns:
        The suggestion to show; "" means discard.
    """
    return run(POST_CACHE, run(PRE_CACHE, text, ctx), ctx)


def _name(filter_: Filter) -> str:
    return getattr(filter_, "__qualname__", repr(filter_))
