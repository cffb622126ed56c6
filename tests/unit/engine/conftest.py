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
