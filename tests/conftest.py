"""Shared fixtures: real embedded weights and tiny random-weight models on the real tokenizer.

Also the one way a test asks for an optional external program (an editor client, a built
server, a browser): `require_program(name, how_to_get)` or, for anything else that may be
missing, `require_or_skip(reason)`. On a machine without it the test is skipped with a one-line
reason saying how to get it, so the README's test command passes with only Python installed.
With ``LSP_CODER_REQUIRE_ALL=1`` (set by `.ci/run`, which installs everything) the same call
fails the test instead, so CI proves every client.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import NoReturn

import pytest

from lsp_coder.model_files import DEFAULT_DRAFT, ensure_embedded
from lsp_coder.shared.runtime import IDLE_EXIT_ENV, RUNTIME_ENV
from tests.fixtures.tiny_gguf import cached_model

REQUIRE_ALL_ENV = "LSP_CODER_REQUIRE_ALL"
"""Set to ``1`` to fail, instead of skip, every test whose optional program is missing."""


def require_or_skip(reason: str) -> NoReturn:
    """Skips the calling test, or fails it when ``LSP_CODER_REQUIRE_ALL=1``.

    Args:
        reason: one line: what is missing and how to get it.
    """
    if os.environ.get(REQUIRE_ALL_ENV) == "1":
        pytest.fail(f"{reason} [{REQUIRE_ALL_ENV}=1: this test must run here]", pytrace=False)
    pytest.skip(reason)


def require_program(name: str, how_to_get: str) -> str:
    """The absolute path of program `name` on PATH; skips (or, in CI, fails) if there is none.

    Args:
        name: the executable, e.g. ``"nvim"``.
        how_to_get: how to install it, e.g. ``"apt-get install neovim"``.

    Returns:
        The path `shutil.which` found.
    """
    path = shutil.which(name)
    if path is None:
        require_or_skip(f"{name!r} is not on PATH; to run this test: {how_to_get}")
    return path


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


@pytest.fixture(scope="session")
def tiny_codellama_draft() -> Path:
    """The tiny CodeLlama vocab without its four infill tokens, as TinyLlama's (Llama 2's)
    vocabulary stops before CodeLlama's: a draft that passes the vocab check."""
    return cached_model("codellama", seed=3, fim_tokens=False)


def server_env(**extra: str) -> dict[str, str]:
    """Environment for a server subprocess: no user config file, quiet llama.cpp, and a shared
    server of its own (a private runtime folder; it exits with its last editor)."""
    env = dict(os.environ)
    env.pop("LSP_CODER_CONFIG", None)
    env["XDG_CONFIG_HOME"] = "/nonexistent-lsp-coder-test"
    env[RUNTIME_ENV] = private_runtime_dir()
    env[IDLE_EXIT_ENV] = "0"
    env.update(extra)
    return env


def private_runtime_dir() -> str:
    """A new folder for shared servers no other test reaches."""
    return tempfile.mkdtemp(prefix="rt-", dir=_RUNTIME_ROOT)


# Every process a test starts, with server_env or not, keeps off the user's shared servers.
_RUNTIME_ROOT = tempfile.mkdtemp(prefix="lsp-coder-test-")
os.environ[RUNTIME_ENV] = private_runtime_dir()
os.environ[IDLE_EXIT_ENV] = "0"
