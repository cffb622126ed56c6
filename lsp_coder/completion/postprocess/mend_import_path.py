"""An import path that names no file, mended to the one file of its name the import can reach."""

from __future__ import annotations

from lsp_coder.completion.postprocess.base import FilterContext


def mend_import_path(text: str, ctx: FilterContext) -> str:
    """``text`` with the relative import path its first line goes on with changed to the one
    file of the same name the path typed so far can reach, where it names no file
    (``FilterContext.mend_import_path``: a model on a remote engine, or a path of ``../``
    steps, which the member rule leaves to the model)."""
    if ctx.mend_import_path is None:
        return text
    first, newline, rest = text.partition("\n")
    mended = ctx.mend_import_path(first)
    return text if mended is None else mended + newline + rest
