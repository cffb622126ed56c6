"""The handlers of open documents: opened, changed, saved, closed, and the highlights asked
where the cursor rests (they tell the scheduler where the user is, and the record of visited
ranges)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from .changed_lines import changed_lines
from .highlights import word_highlights
from .session import LspCoderServer


def register_document_handlers(server: LspCoderServer) -> None:
    """Register the document handlers on ``server``."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LspCoderServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        ls.service.document_opened(doc.uri, doc.text)
        ls.scheduler.opened(doc.uri, Path(to_fs_path(doc.uri) or doc.uri).name, doc.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LspCoderServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.protocol.documents.get(params.text_document.uri)
        if doc is not None:
            first, last = changed_lines(params.content_changes)
            ls.service.document_changed(doc.uri, first, last, lambda: doc.text)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LspCoderServer, params: types.DidSaveTextDocumentParams) -> None:
        doc = ls.protocol.documents.get(params.text_document.uri)
        ls.service.document_saved(params.text_document.uri,
                                  params.text if params.text is not None else (
                                      doc.text if doc is not None else None))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LspCoderServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.service.forget(params.text_document.uri)
        ls.scheduler.forget(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    def document_highlight(ls: LspCoderServer, params: types.DocumentHighlightParams):
        req, doc, position = ls.request(params.text_document.uri, params.position, None)
        if req is None:
            return None
        ls.service.cursor_rested(req.uri, position.line, lambda: doc.text)
        ls.scheduler.cursor_moved(req.uri, req.path, req.text, req.offset)
        return word_highlights(doc, position)
