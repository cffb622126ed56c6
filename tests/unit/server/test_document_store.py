"""The server's document copy against a client-side model of VS Code's TextDocument."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from lsp_coder.completion.context import split_document
from lsp_coder.server.document_store import Document
from lsp_coder.server.text_units import from_units, to_units
from tests.robustness.client_document import ClientDocument


def change(start, end, text) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=text)


def edit_both(doc: Document, client: ClientDocument, start, end, text) -> None:
    doc.apply(change(start, end, text))
    client.edit(start, end, text)
    assert doc.units == client.units


ALPHABET = st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "\x00", "é", "😀", "\u2028",
                            "\x0c", "\t"])
TEXT = st.lists(ALPHABET, max_size=12).map("".join)
POS = st.tuples(st.integers(0, 8), st.integers(0, 12))


@settings(max_examples=300, deadline=None)
@given(TEXT, st.lists(st.tuples(POS, POS, TEXT), max_size=8))
def test_random_edits_keep_the_server_copy_equal_to_the_client(initial, edits):
    doc = Document("file:///x", initial, 1, "python")
    client = ClientDocument(initial)
    for start, end, text in edits:
        edit_both(doc, client, start, end, text)
    assert doc.line_count == len(client._line_offsets())


def test_splitting_a_surrogate_pair_and_joining_it_again():
    doc, client = Document("u", "a😀b", 1, ""), ClientDocument("a😀b")
    edit_both(doc, client, (0, 2), (0, 2), "X")  # between the two halves
    assert doc.text == "a\ufffdX\ufffdb"
    edit_both(doc, client, (0, 2), (0, 3), "")
    assert doc.text == "a😀b"


def test_crlf_lone_cr_and_form_feed_lines():
    doc = Document("u", "a\r\nb\rc\x0cd\ne", 1, "")
    assert doc.line_count == 4  # a | b | c<FF>d | e: a form feed does not end a line
    assert doc.text_offset(types.Position(2, 3)) == 8
    doc.apply(change((0, 1), (0, 1), "\r"))  # "a\r" + "\r\n": still one more line
    assert doc.line_count == 5
    doc.apply(change((1, 0), (1, 0), "\n"))  # the inserted \r and the old \r\n ... and \n
    assert doc.units == ClientDocument("a\r\n\r\nb\rc\x0cd\ne").units


def test_positions_past_the_end_clamp():
    doc = Document("u", "ab\ncd", 1, "")
    assert doc.clamp(types.Position(0, 99)) == types.Position(0, 2)
    assert doc.clamp(types.Position(99, 0)) == types.Position(1, 2)
    doc.apply(change((99, 0), (0, 1), "Z"))  # reversed and past the end: from 0:1 to the end
    assert doc.units == "aZ"


def test_utf8_and_utf32_positions():
    for encoding, character in (("utf-8", 6), ("utf-32", 2), ("utf-16", 3)):
        doc = Document("u", "é😀x", 1, "", encoding)
        assert doc.text_offset(types.Position(0, character)) == 2, encoding
        assert doc.client_units("é😀") == character


def test_units_round_trip():
    text = "a😀\udc00b"
    assert from_units(to_units("a😀b")) == "a😀b"
    assert from_units(to_units(text)) == "a😀\ufffdb"


def test_a_large_document_edit_shifts_line_starts():
    text = "x = 1\n" * 200_000
    doc, client = Document("u", text, 1, ""), ClientDocument(text)
    edit_both(doc, client, (5, 0), (7, 0), "y\r\nz\n")
    assert doc.line_count == 200_001
    assert doc.text_offset(types.Position(199_999, 2)) == len(doc.text) - 4


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab\r\n\u00e9\U0001f600", max_size=40),
       step=st.integers(min_value=1, max_value=6))
def test_an_index_built_in_steps_finds_every_line_start(text, step):
    doc = Document("file:///a.py", text, 1, "python")
    while not doc.index_step(step):
        pass
    units = to_units(text)
    expected = [i + 1 for i, unit in enumerate(units)
                if unit == "\n" or (unit == "\r" and units[i + 1 : i + 2] != "\n")]
    assert [int(s) for s in doc._starts] == expected


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_every_line_ending_lsp_allows_gives_the_same_prompt_layout(ending):
    """The completion layer gets a lone ``\\r`` as ``\\n`` (one character for one, so offsets
    hold): the windows fall on the same lines as with ``\\n``; before, a lone-``\\r`` document
    was one line and all of it went after the middle token."""
    lines = [f"def f{i}(x):" if i % 3 == 0 else f"    y{i} = x + {i}" for i in range(90)]
    doc = Document("file:///a.py", ending.join(lines) + ending, 1, "python")
    offset = doc.text_offset(types.Position(line=61, character=8))
    parts = split_document(doc.text, offset, prefix_tokens=300, suffix_tokens=200)
    plain = "\n".join(lines) + "\n"
    expected = split_document(plain, sum(len(line) + 1 for line in lines[:61]) + 8,
                              prefix_tokens=300, suffix_tokens=200)
    assert parts.line_prefix == expected.line_prefix == "    y61 "
    for got, want in ((parts.above, expected.above), (parts.suffix, expected.suffix)):
        assert got.replace("\r\n", "\n") == want
        assert want.count("\n") > 2
