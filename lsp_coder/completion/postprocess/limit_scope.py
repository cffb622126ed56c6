"""Filter: stop a suggestion where its indentation leaves the block being written."""

from __future__ import annotations

from lsp_coder.completion.postprocess._text import (
    drop_trailing_blank,
    indent_width,
    is_blank,
    only_closes,
)
from lsp_coder.completion.postprocess.base import FilterContext
from lsp_coder.completion.postprocess.statement import statement_end

_OPENERS = (":", "{", "(", "[")


def _block_indent(cursor_line: str, lines: list[str]) -> tuple[int, bool]:
    """Returns the block's indentation and whether the cursor line opens that block.

    `lines[0]` continues `cursor_line`; later lines are whole document lines.
    """
    opens_block = is_blank(lines[0]) and cursor_line.rstrip().endswith(_OPENERS)
    if is_blank(cursor_line) or opens_block:
        # The cursor line joined with the suggestion's first line is a whole line;
        # when the cursor line opens the block that whole line is the opener.
        whole = [] if opens_block else [cursor_line + lines[0]]
        candidates = [line for line in whole + lines[1:] if not is_blank(line)]
        if candidates:
            return indent_width(candidates[0]), opens_block
    return indent_width(cursor_line), False


def limit_scope(text: str, ctx: FilterContext) -> str:
    """Cuts a suggestion at the first line that is indented less than its block.

    The block's indentation is the cursor line's, except when the cursor line
    is blank, or the suggestion starts with a newline after a block opener
    (a line ending in `:`, `{`, `(` or `[`): then it is the indentation of the
    first non-blank suggestion line. Blank lines inside the kept part stay;
    blank lines just before the cut go. When the cursor line opened the block,
    a bracket-only line at the cursor line's indentation (`}`, `});`) closes it
    and is kept as the last line; `drop_suffix_overlap` removes it again if the
    document already has it.

    In single-line mode (`ctx.multiline` is False) only the first line is kept (a
    suggestion starting with a newline becomes ""), or the lines to the one that closes
    a bracket the cursor line leaves open (`statement_end`).

    Args:
        text: the suggestion.
        ctx: `prefix` gives the cursor line; `multiline` selects the mode.

    Returns:
        The suggestion up to the end of the block.
    """
    if not ctx.multiline:
        end = statement_end(ctx, text, len(text))
        return text if end is None else text[:end]
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    cursor_line = ctx.cursor_line
    block, opens_block = _block_indent(cursor_line, lines)
    for i in range(1, len(lines)):
        line = lines[i]
        if is_blank(line) or indent_width(line) >= block:
            continue
        if opens_block and only_closes(line):
            if indent_width(line) == indent_width(cursor_line):
                return "\n".join(lines[: i + 1])
        return "\n".join(drop_trailing_blank(lines[:i]))
    return text
