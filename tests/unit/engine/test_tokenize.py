"""``Model.tokenize`` gives the tokens of exactly the text, on a byte-level BPE vocabulary
(Qwen) and on a SentencePiece one (CodeLlama's, which puts a space before every text it
tokenizes on its own)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_coder.engine.llama import Model, ModelParams

TEXTS = ["a", "    ", "def f():\n    return 1\n", "\n\nx", " x", "\tx = 'é'"]


@pytest.fixture(scope="module", params=["tiny_qwen", "tiny_codellama"])
def model(request):
    m = Model(request.getfixturevalue(request.param), ModelParams(vocab_only=True))
    yield m
    m.close()


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_reads_back_exactly(model, text):
    assert model.detokenize(model.tokenize(text)) == text


def test_only_the_sentencepiece_vocabulary_has_a_lead(tiny_qwen, tiny_codellama):
    qwen = Model(tiny_qwen, ModelParams(vocab_only=True))
    llama = Model(tiny_codellama, ModelParams(vocab_only=True))
    try:
        assert qwen.text_lead == []
        assert llama.detokenize(llama.text_lead) == " "
        assert llama.tokenize("") == []
    finally:
        qwen.close()
        llama.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(TEXTS + ["(", ")", "  ", "\n", "return"]), max_size=5))
def test_pieces_tokenized_apart_join_into_their_text(model, pieces):
    joined = [t for piece in pieces for t in model.tokenize(piece)]
    assert model.detokenize(joined) == "".join(pieces)
