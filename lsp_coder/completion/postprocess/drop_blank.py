"""Filter: discard a suggestion that holds only whitespace."""

from __future__ import annotations

from lsp_coder.completion.postprocess.base import FilterContext


def drop_blank(text: str, ctx: FilterContext) -> str:
    """Discards a whitespace-only suggestion.

    Args:
        text: the suggestion.
        ctx: unused.

    Returns:
        "" if `text` holds only whitespace (or nothing), else `text` unchanged.
    """
    return text if text.strip() else ""
