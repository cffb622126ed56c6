"""Fixtures of the engine's tests on a real (tiny) llama.cpp model."""

from __future__ import annotations

import pytest

from lsp_coder.engine.llama import Model, ModelParams


@pytest.fixture(scope="module")
def model(tiny_qwen):
    """The tiny random qwen2 model on the real tokenizer, loaded once per test module."""
    m = Model(tiny_qwen, ModelParams())
    yield m
    m.close()


@pytest.fixture(scope="module")
def tiny_vocab(tiny_qwen):
    """The tiny model's vocabulary alone (the real tokenizer, no weights), once per module."""
    m = Model(tiny_qwen, ModelParams(vocab_only=True))
    yield m
    m.close()
