"""The completion handlers, ``textDocument/inlineCompletion`` and ``textDocument/completion``,
and the suggestion as their items."""

from __future__ import annotations

from dataclasses import replace

from lsprotocol import types

from ..completion.service import CompletionRequest, Suggestion
from .commands import ACCEPTED_COMMAND
from .session import LspCoderServer
from .words import word_start

SORT_AFTER_SERVER_ITEMS = "~"
"""The ``sortText`` prefix of the completion item: after digits and letters (see
``_completion_items``)."""


def register_completion_handlers(server: LspCoderServer) -> None:
    """Register the completion handlers on ``server``."""

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(ls: LspCoderServer, params: types.InlineCompletionParams):
        req, doc, position = ls.request(params.text_document.uri, params.position,
                                        ls.config.completion.inline_budget_ms or None)
        if req is None:
            return None
        ls.service.cursor_rested(req.uri, position.line, lambda: doc.text)
        if params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked:
            req = replace(req, alternatives=ls.config.completion.alternatives, invoked=True)
        suggestion = await ls.scheduler.complete(req, "inline")
        ls.status.update()
        return types.InlineCompletionList(items=_inline_items(suggestion, position))

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(
        trigger_characters=[".", "("], resolve_provider=False))
    async def completion(ls: LspCoderServer, params: types.CompletionParams):
        if not ls.menu_item:  # the client shows the suggestion as ghost text
            return types.CompletionList(is_incomplete=False, items=[])
        req, doc, position = ls.request(params.text_document.uri, params.position,
                                        ls.config.completion.completion_budget_ms)
        if req is None:
            return None
        ls.service.cursor_rested(req.uri, position.line, lambda: doc.text)
        suggestion = await ls.scheduler.complete(
            req, "completion", hard_budget_ms=ls.config.completion.completion_budget_ms)
        ls.status.update()
        return types.CompletionList(is_incomplete=True,
                                    items=_completion_items(suggestion, req, doc, position))


def _inline_items(suggestion: Suggestion, position: types.Position):
    """The suggestion, then its alternatives (a client cycles through them in this order)."""
    if not suggestion.text:
        return []
    return [types.InlineCompletionItem(
        insert_text=text,
        range=types.Range(start=position, end=position),
        command=types.Command(title="lsp-coder: accepted", command=ACCEPTED_COMMAND,
                              arguments=[suggestion.stop_reason or "ok"]),
    ) for text in (suggestion.text, *suggestion.alternatives)]


def _completion_items(suggestion: Suggestion, req: CompletionRequest, doc,
                      position: types.Position) -> list[types.CompletionItem]:
    """The suggestion as one menu item, ranked after the language server's items that match
    the typed word as well as it does.

    Not preselected. ``sortText`` is ``~`` and the label: ``~`` sorts after the digits and
    letters the servers' own ``sortText`` keys are made of (jedi ``v0001``, gopls ``00001``,
    rust-analyzer hex), so a client that orders by ``sortText`` alone (eglot, Neovim's
    menu) shows the server's exact names first and this multi-line guess below them, and a
    client that ranks by how well the typed text matches first (VS Code, Helix) still lifts it
    when the user types further into the suggestion than any other item matches. Kind Text,
    not Snippet: VS Code's ``editor.snippetSuggestions = "top"`` lifts snippets above all.
    """
    if not suggestion.text:
        return []
    line_start = req.text.rfind("\n", 0, req.offset) + 1
    start = word_start(req.text, line_start, req.offset)
    word = req.text[start : req.offset]
    start_char = position.character - doc.client_units(word)
    new_text = word + suggestion.text
    label = new_text.split("\n", 1)[0].strip() or new_text.strip().split("\n", 1)[0]
    return [types.CompletionItem(
        label=label,
        kind=types.CompletionItemKind.Text,
        detail="lsp-coder",
        documentation=types.MarkupContent(kind=types.MarkupKind.PlainText, value=new_text),
        filter_text=new_text,
        sort_text=SORT_AFTER_SERVER_ITEMS + label,
        insert_text_format=types.InsertTextFormat.PlainText,
        text_edit=types.TextEdit(
            range=types.Range(start=types.Position(line=position.line, character=start_char),
                              end=position),
            new_text=new_text),
        command=types.Command(title="lsp-coder: accepted", command=ACCEPTED_COMMAND,
                              arguments=["completion"]),
    )]
