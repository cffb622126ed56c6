"""A serving engine's prompt as token ids, laid out as ``fim_text.build`` lays out the text and
as the in-process engine builds its tokens (``local_prompt``): each piece of user content
tokenized on its own, as text, and the template's control tokens put in by id only where
lsp-coder puts them. The pieces are already held to their budgets
(``RemoteBackend.prompt_parts``, ``remote_fit``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..prompt_parts import PromptParts
from . import fim_text
from .engine_tokens import FimIds
from .fim_text import file_entry

Text = Callable[[str], Sequence[int]]


def repository(ids: FimIds, parts: PromptParts, text: Text) -> list[int]:
    """The other files before the open one (``fim_text.repository``'s layout)."""
    if not parts.extra:
        return []
    if ids.file_sep < 0:  # path comments: one text, as the in-process engine reads it
        return list(text(fim_text.repository(fim_text.FimText("", "", ""), parts.extra,
                                             parts.repo, parts.path)))
    out = [ids.repo_name, *text(f"{parts.repo}\n")] if ids.repo_name >= 0 and parts.repo else []
    for path, body in parts.extra:
        out += [ids.file_sep, *text(file_entry(path, body))]
    return out + ([ids.file_sep, *text(f"{parts.path}\n")] if parts.path else [])


def build(ids: FimIds, parts: PromptParts, text: Text, *, shared: bool = False) -> list[int]:
    """The prompt's ids: ``begin``, the other files, then PSM with the cursor line's code after
    the middle token. ``shared``: only what every cursor in the window shares (up to the
    suffix marker, nothing after the cursor): llama-server's window prefill."""
    indent, typed = parts.cursor_line()
    head = [*ids.begin, *repository(ids, parts, text), ids.prefix, *ids.lead,
            *text(parts.imports), *text(parts.above)]
    if shared:
        return head
    return [*head, *text(indent), ids.suffix, *text(parts.suffix), ids.middle,
            *text(parts.recent), *text(typed)]

