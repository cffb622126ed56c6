"""Where an answer that completes the cursor's line ends: at the line's end, or, when the
line leaves a bracket open there, at the end of the line that closes it.

A model often breaks a long call over lines (``client = new DeviceCodeClient(`` and the
arguments below): cut at the first newline, the suggestion would be the opener alone, to be
accepted and asked for again. Shown to the line that closes it, it is the whole statement,
as an editor's other completion servers show it. So too after an opener the editor closed
itself (``f(|)``): an answer that breaks the line there goes on to the line that closes the
bracket, or to its end (``closer_line`` then puts the editor's closer on a line of its own).
"""

from __future__ import annotations

from lsp_coder.completion.postprocess._text import indent_width, is_blank, only_closes
from lsp_coder.completion.postprocess.base import FilterContext

OPENERS = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
"""The brackets counted, each with what it adds to the depth."""

BRACKETS = ("(", "[", "{")
"""The openers an editor may close as they are typed, its closer left after the cursor."""

QUOTES = frozenset("'\"`")
"""What opens a string literal (brackets inside one do not count); one ends at its line's
end at the latest."""


def open_depth(text: str) -> int:
    """How many brackets ``text`` opens and does not close (negative: it closes more than it
    opens, as inside a call opened on a line above). String literals are skipped."""
    depth, quote, escaped = 0, "", False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote or char == "\n":
                quote = ""
        elif char in QUOTES:
            quote = char
        else:
            depth += OPENERS.get(char, 0)
    return depth


def statement_end(ctx: FilterContext, text: str, max_lines: int) -> int | None:
    """Where ``text`` (an answer at the cursor of ``ctx``) ends in single-line mode: at its
    first newline, unless the line leaves a bracket open there with nothing after the
    cursor, or ``text`` starts with a newline after an opener the editor closed
    (``auto_closed``); then at the newline after the line that closes the brackets, the
    ``max_lines``-th line, or before a blank line or one less indented than the cursor's.
    None: ``text`` has not reached it."""
    cursor_line, rest_of_line = ctx.cursor_line, ctx.rest_of_line
    first = text.find("\n")
    if first < 0:
        return None
    depth = open_depth(cursor_line + text[:first])
    goal = 0  # the depth at the statement's end: all its brackets closed
    if rest_of_line.strip():
        if not (auto_closed(cursor_line, rest_of_line) and not text[:first].strip()):
            return first
        goal = depth - 1  # the editor's closer closes the rest: the answer's end is there
    elif depth <= 0:
        return first
    indent = indent_width(cursor_line + text[:first])
    lines, end = 1, first
    while lines < max_lines:
        start = end + 1
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        complete = end >= 0
        if (complete and is_blank(line)) or (line.strip() and indent_width(line) < indent):
            return start - 1
        if not complete:
            return None
        lines += 1
        depth += open_depth(line)
        if depth <= goal:
            return end
    return end


def auto_closed(cursor_line: str, rest_of_line: str) -> bool:
    """Whether the cursor is right after an opener (``cursor_line``: the text before it on
    its line) and the rest of its line only closes (``f(|)``, ``[|];``), as when the editor
    closed the bracket itself."""
    return cursor_line.rstrip().endswith(BRACKETS) and only_closes(rest_of_line)
