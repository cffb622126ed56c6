"""The forwarder's document copies stay equal to the server's under any edit, in every
position encoding (they are what a new shared server is told after a crash)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from lsp_coder.server.document_store import Document
from lsp_coder.server.text_units import from_units
from lsp_coder.shared.documents import Documents

ALPHABET = st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "é", "😀", "\u2028", "\t"])
TEXT = st.lists(ALPHABET, max_size=12).map("".join)
POS = st.tuples(st.integers(0, 8), st.integers(0, 12))
ENCODINGS = {"utf-8": types.PositionEncodingKind.Utf8,
             "utf-16": types.PositionEncodingKind.Utf16,
             "utf-32": types.PositionEncodingKind.Utf32}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(ENCODINGS)), TEXT,
       st.lists(st.one_of(st.tuples(POS, POS, TEXT), TEXT), max_size=10))
# A \n written past the last line after a lone \r makes one line end of the two.
@example("utf-16", "\r", [((2, 0), (2, 0), "\n"), ((0, 0), (1, 0), "")])
def test_random_edits_keep_the_forwarder_copy_equal_to_the_server_copy(encoding, initial,
                                                                         edits):
    uri = "file:///x.py"
    server = Document(uri, initial, 1, "python", ENCODINGS[encoding])
    forwarder = Documents()
    forwarder.encoding = encoding
    forwarder.note("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": initial}})
    for version, edit in enumerate(edits, start=2):
        if isinstance(edit, str):
            change: dict = {"text": edit}
            server.apply(types.TextDocumentContentChangeWholeDocument(text=edit))
        else:
            (sl, sc), (el, ec), text = edit
            change = {"range": {"start": {"line": sl, "character": sc},
                                "end": {"line": el, "character": ec}}, "text": text}
            server.apply(types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(sl, sc), end=types.Position(el, ec)),
                text=text))
        forwarder.note("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
    tracked = forwarder.open[uri]
    assert tracked.units == server.units
    # The editor's own text (the server hands the completion layer a lone \r as \n).
    assert tracked.opened()["textDocument"]["text"] == from_units(server.units)
    assert tracked.version == 1 + len(edits)


def test_a_closed_document_is_forgotten_and_bad_notifications_are_skipped():
    docs = Documents()
    docs.note("textDocument/didOpen", {"textDocument": {
        "uri": "file:///a", "languageId": "c", "version": 3, "text": "int x;"}})
    docs.note("textDocument/didChange", {"textDocument": {"uri": "file:///a"},
                                         "contentChanges": "not a list"})
    docs.note("textDocument/didOpen", {"textDocument": "nonsense"})
    for version in (float("inf"), float("nan"), "3", 2.5, True):  # as the server refuses
        docs.note("textDocument/didOpen", {"textDocument": {
            "uri": "file:///b", "version": version, "text": "y"}})
        docs.note("textDocument/didChange", {"textDocument": {"uri": "file:///a",
                                                              "version": version},
                                             "contentChanges": [{"text": "lost"}]})
    bad_second = [{"range": {"start": {"line": 0, "character": 0},
                             "end": {"line": 0, "character": 0}}, "text": "lost "},
                  {"range": {"start": {"line": float("inf"), "character": 0},
                             "end": {"line": 0, "character": "1"}}, "text": "x"}]
    docs.note("textDocument/didChange", {"textDocument": {"uri": "file:///a", "version": 4},
                                         "contentChanges": bad_second})  # refused whole
    assert "file:///b" not in docs.open
    assert docs.open["file:///a"].opened()["textDocument"] == {
        "uri": "file:///a", "languageId": "c", "version": 3, "text": "int x;"}
    docs.note("textDocument/didClose", {"textDocument": {"uri": "file:///a"}})
    assert docs.open == {}
