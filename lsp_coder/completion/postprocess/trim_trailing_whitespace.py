"""Filter: strip trailing spaces and tabs, and trailing blank lines."""

from __future__ import annotations

from lsp_coder.completion.postprocess._text import drop_trailing_blank
from lsp_coder.completion.postprocess.base import FilterContext


def _rstrip_line(line: str) -> str:
    # NOTE: a CRLF document yields lines ending in "\r"; keep that line ending.
    if line.endswith("\r"):
        return line[:-1].rstrip(" \t") + "\r"
    return line.rstrip(" \t")


def trim_trailing_whitespace(text: str, ctx: FilterContext) -> str:
    """Strips trailing spaces/tabs on every line and blank lines at the end.

    Context-free. A leading newline is kept (a suggestion right after `:` at the
    end of a line starts with "\\n    "), but the indentation of a first line
    that is only whitespace is stripped, since it would be trailing whitespace.

    Args:
        text: the suggestion.
        ctx: unused.

    Returns:
        The trimmed suggestion; "" if it held only whitespace.
    """
    lines = drop_trailing_blank([_rstrip_line(line) for line in text.split("\n")])
    # The last line lost its "\n" (if it had one), so its "\r" is trailing too.
    lines[-1] = lines[-1].rstrip("\r")
    if len(lines) == 1 and not lines[0].strip():
        return ""
    return "\n".join(lines)
