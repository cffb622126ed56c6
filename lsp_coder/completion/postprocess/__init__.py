"""Postprocess filters for model suggestions: one filter per module, ordered in `pipeline`."""

from lsp_coder.completion.postprocess.base import Filter, FilterContext
from lsp_coder.completion.postprocess.pipeline import POST_CACHE, PRE_CACHE, postprocess, run

__all__ = ["Filter", "FilterContext", "POST_CACHE", "PRE_CACHE", "postprocess", "run"]
