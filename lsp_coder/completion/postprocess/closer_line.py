"""Filter: after an opener the editor closed itself (``f(|)``), a suggestion that breaks the
line there ends with a new line at the cursor line's indentation, where the editor's closer
then stands (``f(\\n    a,\\n    b,\\n)``), not glued to its last argument (``b,)``)."""

from __future__ import annotations

from lsp_coder.completion.postprocess.base import FilterContext
from lsp_coder.completion.postprocess.statement import auto_closed


def closer_line(text: str, ctx: FilterContext) -> str:
    """``text`` with a newline and the cursor line's indentation at its end when it starts
    with a newline after an opener the editor closed (``auto_closed``) and has a line of
    code after that; else ``text`` unchanged.

    Args:
        text: the suggestion, its trailing whitespace trimmed.
        ctx: ``prefix`` gives the cursor line, ``suffix`` the rest of it.

    Returns:
        The suggestion, ending where the closer goes.
    """
    cursor_line = ctx.cursor_line
    if not (text.startswith(("\n", "\r\n")) and text.strip()
            and auto_closed(cursor_line, ctx.rest_of_line)):
        return text
    indent = cursor_line[: len(cursor_line) - len(cursor_line.lstrip(" \t"))]
    newline = "\r\n" if text.startswith("\r\n") else "\n"
    return text + newline + indent
