"""Shared fixtures: real embedded weights and tiny random-weight models on the real tokenizer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_coder.model_files import DEFAULT_DRAFT, ensure_embedded
from tests.fixtures.tiny_gguf import cached_model


@pytest.fixture(scope="session")
def real_small_model() -> Path:
    """Qwen2.5-Coder-0.5B Q4_K_M from the ``lsp-coder[model]`` packages (assembled once)."""
    return ensure_embedded(DEFAULT_DRAFT)


@pytest.fixture(scope="session")
def tiny_qwen(real_small_model: Path) -> Path:
    """A 2-layer random qwen2 model with the real Qwen tokenizer and FIM tokens."""
    return cached_model("qwen", tokenizer_gguf=real_small_model)


@pytest.fixture(scope="session")
def tiny_qwen_nofim(real_small_model: Path) -> Path:
    return cached_model("qwen", tokenizer_gguf=real_small_model, fim=False)


@pytest.fixture(scope="session")
def tiny_qwen_other_seed(real_small_model: Path) -> Path:
    """Same vocabulary, different weights: a compatible (if useless) draft model."""
    return cached_model("qwen", tokenizer_gguf=real_small_model, seed=1)


@pytest.fixture(scope="session")
def tiny_qwen_padded(real_small_model: Path) -> Path:
    """The vocabulary plus 200 extra tokens: too different to draft for the target."""
    return cached_model("qwen", tokenizer_gguf=real_small_model, seed=2, vocab_pad=200)


@pytest.fixture(scope="session")
def tiny_codellama() -> Path:
    return cached_model("codellama")


def server_env(**extra: str) -> dict[str, str]:
    """Environment for a server subprocess: no user config file, quiet llama.cpp."""
    env = dict(os.environ)
    env.pop("LSP_CODER_CONFIG", None)
    env["XDG_CONFIG_HOME"] = "/nonexistent-lsp-coder-test"
    env.update(extra)
    return env
