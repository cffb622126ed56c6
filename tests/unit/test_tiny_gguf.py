"""Checks that the tiny random GGUF fixtures load and behave in llama.cpp.

Uses only the low-level ``llama_cpp`` ctypes API.  The Qwen tests take their tokenizer from
the embedded Qwen2.5-Coder-0.5B (the ``real_small_model`` fixture); the CodeLlama tests need
nothing but llama_cpp.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from pathlib import Path

import llama_cpp
import numpy as np
import pytest

from tests.fixtures.tiny_gguf import (
    QWEN_FIM_IDS,
    build_tiny_codellama,
    cached_model,
    codellama_fim_ids,
)

QWEN_VOCAB = 151936
VOCAB_PAD = 64

PY_SNIPPET = '''\
import os
from typing import Optional


class Cache:
    """LRU cache — with ünïcödé, tabs\tand   spaces."""

    def __init__(self, capacity: int = 128) -> None:
        self.capacity = capacity
        self._data: dict[str, bytes] = {}

    def get(self, key: str) -> Optional[bytes]:
        if key not in self._data:
            return None
        return self._data[key]  # 日本語 comment 🚀


def fibonacci(n):
    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)
'''

PROMPT_A = "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fib"
PROMPT_B = "import json\nimport sys\n\nclass Config:\n    def __init__(self, path: str):\n  self.x"


# --------------------------------------------------------------------------------------
# low-level llama.cpp helpers
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _llama_backend() -> None:
    llama_cpp.llama_backend_init()  # idempotent; never freed (other tests may use llama.cpp)


@contextlib.contextmanager
def load_model(path: Path, *, vocab_only: bool = False) -> Iterator[llama_cpp.llama_model_p]:
    """Load a GGUF on the CPU (``use_extra_bufts=False``: repacking crashes this CPU)."""
    params = llama_cpp.llama_model_default_params()
    params.use_extra_bufts = False
    params.n_gpu_layers = 0
    params.vocab_only = vocab_only
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    assert model, f"llama.cpp failed to load {path}"
    try:
        yield model
    finally:
        llama_cpp.llama_model_free(model)


def tokenize(vocab: llama_cpp.llama_vocab_p, text: str, *, special: bool = False) -> list[int]:
    """Tokenize ``text``; ``special`` both adds BOS (if the vocab wants it) and parses
    special-token texts."""
    data = text.encode()
    n_max = len(data) + 8
    buf = (llama_cpp.llama_token * n_max)()
    n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, n_max, special, special)
    assert n >= 0, f"tokenize failed ({n})"
    return list(buf[:n])


def detokenize(vocab: llama_cpp.llama_vocab_p, tokens: list[int]) -> str:
    """Concatenate the pieces of ``tokens`` (special tokens rendered)."""
    out = bytearray()
    buf = ctypes.create_string_buffer(256)
    for tok in tokens:
        n = llama_cpp.llama_token_to_piece(vocab, tok, buf, len(buf), 0, True)
        assert n >= 0
        out += buf.raw[:n]
    return out.decode("utf-8", errors="replace")


def fim_ids(vocab: llama_cpp.llama_vocab_p) -> tuple[int, int, int]:
    return (
        llama_cpp.llama_vocab_fim_pre(vocab),
        llama_cpp.llama_vocab_fim_suf(vocab),
        llama_cpp.llama_vocab_fim_mid(vocab),
    )


def last_logits(model: llama_cpp.llama_model_p, tokens: list[int]) -> np.ndarray:
    """Decode ``tokens`` in a fresh context and return the logits of the last position."""
    cparams = llama_cpp.llama_context_default_params()
    cparams.n_ctx = 256
    cparams.n_batch = 64
    cparams.n_ubatch = 64
    cparams.n_threads = 2
    cparams.n_threads_batch = 2
    ctx = llama_cpp.llama_init_from_model(model, cparams)
    assert ctx, "llama_init_from_model failed"
    batch = llama_cpp.llama_batch_init(len(tokens), 0, 1)
    try:
        for i, tok in enumerate(tokens):
            batch.token[i] = tok
            batch.pos[i] = i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = i == len(tokens) - 1
        batch.n_tokens = len(tokens)
        assert llama_cpp.llama_decode(ctx, batch) == 0, "llama_decode failed"
        n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model))
        ptr = llama_cpp.llama_get_logits_ith(ctx, len(tokens) - 1)
        return np.ctypeslib.as_array(ptr, shape=(n_vocab,)).copy()
    finally:
        llama_cpp.llama_batch_free(batch)
        llama_cpp.llama_free(ctx)


def assert_prompt_sensitive(model: llama_cpp.llama_model_p) -> None:
    """Two different 20-token prompts give finite, non-flat logits with different argmax."""
    vocab = llama_cpp.llama_model_get_vocab(model)
    argmaxes = []
    for prompt in (PROMPT_A, PROMPT_B):
        tokens = tokenize(vocab, prompt, special=True)[:20]
        assert len(tokens) == 20, tokens
        logits = last_logits(model, tokens)
        assert np.all(np.isfinite(logits))
        assert logits.std() > 0.1, "logits are (nearly) constant"
        argmaxes.append(int(logits.argmax()))
    assert argmaxes[0] != argmaxes[1], f"same argmax {argmaxes[0]} for different prompts"


# --------------------------------------------------------------------------------------
# Qwen2 with the real tokenizer
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tokenizer_gguf(real_small_model: Path) -> Path:
    return real_small_model


@pytest.fixture(scope="session")
def real_vocab_model(tokenizer_gguf: Path) -> Iterator[llama_cpp.llama_model_p]:
    with load_model(tokenizer_gguf, vocab_only=True) as model:
        yield model


@pytest.fixture(scope="session")
def tiny_qwen(tokenizer_gguf: Path) -> Iterator[llama_cpp.llama_model_p]:
    with load_model(cached_model("qwen", tokenizer_gguf=tokenizer_gguf)) as model:
        yield model


@pytest.fixture(scope="session")
def tiny_qwen_nofim_padded(tokenizer_gguf: Path) -> Iterator[llama_cpp.llama_model_p]:
    path = cached_model("qwen", tokenizer_gguf=tokenizer_gguf, fim=False, vocab_pad=VOCAB_PAD)
    with load_model(path) as model:
        yield model


def test_qwen_file_is_small(tokenizer_gguf: Path) -> None:
    path = cached_model("qwen", tokenizer_gguf=tokenizer_gguf)
    assert path.stat().st_size < 60 * 1024 * 1024


@pytest.mark.parametrize("special", [False, True])
def test_qwen_tokenization_matches_real_model(
    real_vocab_model: llama_cpp.llama_model_p,
    tiny_qwen: llama_cpp.llama_model_p,
    tiny_qwen_nofim_padded: llama_cpp.llama_model_p,
    special: bool,
) -> None:
    real = llama_cpp.llama_model_get_vocab(real_vocab_model)
    expected = tokenize(real, PY_SNIPPET, special=special)
    assert len(expected) > 100
    for model in (tiny_qwen, tiny_qwen_nofim_padded):
        vocab = llama_cpp.llama_model_get_vocab(model)
        assert llama_cpp.llama_vocab_type(vocab) == llama_cpp.LLAMA_VOCAB_TYPE_BPE
        assert tokenize(vocab, PY_SNIPPET, special=special) == expected
        assert detokenize(vocab, expected) == PY_SNIPPET


def test_qwen_special_ids_match_real_model(
    real_vocab_model: llama_cpp.llama_model_p, tiny_qwen: llama_cpp.llama_model_p
) -> None:
    real = llama_cpp.llama_model_get_vocab(real_vocab_model)
    tiny = llama_cpp.llama_model_get_vocab(tiny_qwen)
    for fn in ("llama_vocab_bos", "llama_vocab_eos", "llama_vocab_eot", "llama_vocab_pad",
               "llama_vocab_n_tokens", "llama_vocab_get_add_bos"):  # fmt: skip
        assert getattr(llama_cpp, fn)(tiny) == getattr(llama_cpp, fn)(real), fn
    assert llama_cpp.llama_vocab_n_tokens(tiny) == QWEN_VOCAB


def test_qwen_fim_ids(
    real_vocab_model: llama_cpp.llama_model_p, tiny_qwen: llama_cpp.llama_model_p
) -> None:
    expected = (QWEN_FIM_IDS["pre"], QWEN_FIM_IDS["suf"], QWEN_FIM_IDS["mid"])
    assert expected == (151659, 151661, 151660)
    assert fim_ids(llama_cpp.llama_model_get_vocab(real_vocab_model)) == expected
    vocab = llama_cpp.llama_model_get_vocab(tiny_qwen)
    assert fim_ids(vocab) == expected
    text = "<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n<|fim_middle|>"
    tokens = tokenize(vocab, text, special=True)
    assert tokens[0] == 151659 and 151661 in tokens and tokens[-1] == 151660


def test_qwen_nofim_has_no_fim_tokens(tiny_qwen_nofim_padded: llama_cpp.llama_model_p) -> None:
    vocab = llama_cpp.llama_model_get_vocab(tiny_qwen_nofim_padded)
    assert fim_ids(vocab) == (-1, -1, -1)
    assert llama_cpp.llama_vocab_fim_pad(vocab) == -1
    assert llama_cpp.llama_vocab_fim_rep(vocab) == -1
    assert llama_cpp.llama_vocab_fim_sep(vocab) == -1
    # the FIM marker texts are now ordinary text
    tokens = tokenize(vocab, "<|fim_prefix|>x<|fim_suffix|>", special=True)
    assert not set(tokens) & set(QWEN_FIM_IDS.values())


def test_qwen_vocab_pad(tiny_qwen_nofim_padded: llama_cpp.llama_model_p) -> None:
    vocab = llama_cpp.llama_model_get_vocab(tiny_qwen_nofim_padded)
    assert llama_cpp.llama_vocab_n_tokens(vocab) == QWEN_VOCAB + VOCAB_PAD
    last = QWEN_VOCAB + VOCAB_PAD - 1
    assert llama_cpp.llama_vocab_get_text(vocab, last) == f"[PAD{last}]".encode()


def test_qwen_decode_is_prompt_sensitive(tiny_qwen: llama_cpp.llama_model_p) -> None:
    assert_prompt_sensitive(tiny_qwen)


def test_qwen_decode_uses_context(tiny_qwen: llama_cpp.llama_model_p) -> None:
    """Same last token, different context: attention makes the argmax differ, and the
    untied output keeps the model from merely echoing its last input token."""
    vocab = llama_cpp.llama_model_get_vocab(tiny_qwen)
    prompts = ["def add(a, b):\n    return a +", "x = [1, 2, 3]\nprint(len(x)) +",
               "import os\nimport sys\n +"]  # fmt: skip
    results = []
    for prompt in prompts:
        tokens = tokenize(vocab, prompt)
        results.append((tokens[-1], int(last_logits(tiny_qwen, tokens).argmax())))
    assert len({last for last, _ in results}) == 1, results  # all end in " +"
    assert len({argmax for _, argmax in results}) == len(prompts), results
    assert all(argmax != last for last, argmax in results), results


def test_qwen_padded_decode(tiny_qwen_nofim_padded: llama_cpp.llama_model_p) -> None:
    assert_prompt_sensitive(tiny_qwen_nofim_padded)


# --------------------------------------------------------------------------------------
# CodeLlama-style SentencePiece model
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_codellama() -> Iterator[llama_cpp.llama_model_p]:
    with load_model(cached_model("codellama")) as model:
        yield model


@pytest.mark.parametrize("fim_keys", ["modern", "legacy", "none"])
def test_codellama_fim_ids(tmp_path: Path, fim_keys: str) -> None:
    path = build_tiny_codellama(tmp_path / "cl.gguf", fim_keys=fim_keys)  # type: ignore[arg-type]
    ids = codellama_fim_ids()
    with load_model(path, vocab_only=True) as model:
        vocab = llama_cpp.llama_model_get_vocab(model)
        assert fim_ids(vocab) == (ids["pre"], ids["suf"], ids["mid"])
        if fim_keys == "none":
            # llama.cpp's text auto-detection knows "_<EOT>" (ASCII underscore), not
            # CodeLlama's "▁<EOT>": without tokenizer.ggml.eot_token_id there is no EOT.
            assert llama_cpp.llama_vocab_eot(vocab) == -1
        else:
            assert llama_cpp.llama_vocab_eot(vocab) == ids["eot"]
            assert llama_cpp.llama_vocab_is_eog(vocab, ids["eot"])
        assert llama_cpp.llama_vocab_get_text(vocab, ids["pre"]) == "▁<PRE>".encode()


def test_codellama_tokenizer(tiny_codellama: llama_cpp.llama_model_p) -> None:
    vocab = llama_cpp.llama_model_get_vocab(tiny_codellama)
    assert llama_cpp.llama_vocab_type(vocab) == llama_cpp.LLAMA_VOCAB_TYPE_SPM
    assert llama_cpp.llama_vocab_bos(vocab) == 1
    assert llama_cpp.llama_vocab_eos(vocab) == 2
    assert llama_cpp.llama_vocab_get_add_bos(vocab)

    text = "def fib(n):\n    return fib(n - 1) + 日本"
    tokens = tokenize(vocab, text, special=True)
    assert tokens[0] == 1  # BOS
    pieces = [llama_cpp.llama_vocab_get_text(vocab, t).decode() for t in tokens[1:]]
    assert pieces[0] == "▁def"  # add_space_prefix + whole-word piece
    assert "▁return" in pieces
    assert "<0x0A>" in pieces  # newline through byte fallback
    assert "<0xE6>" in pieces  # non-ASCII through byte fallback
    # SPM detokenization of the first piece keeps the added leading space
    assert detokenize(vocab, tokens[1:]).lstrip(" ") == text

    ids = codellama_fim_ids()
    infill = tokenize(vocab, "▁<PRE> def f(): ▁<SUF> pass ▁<MID>", special=False)
    assert ids["pre"] not in infill  # without parse_special the markers are plain text
    infill = tokenize(vocab, "▁<PRE> def f(): ▁<SUF>\n ▁<MID>", special=True)
    assert ids["pre"] in infill and ids["suf"] in infill and ids["mid"] in infill


def test_codellama_decode_is_prompt_sensitive(tiny_codellama: llama_cpp.llama_model_p) -> None:
    assert_prompt_sensitive(tiny_codellama)


# --------------------------------------------------------------------------------------
# builder determinism and cache
# --------------------------------------------------------------------------------------


def test_build_is_deterministic(tmp_path: Path) -> None:
    a = build_tiny_codellama(tmp_path / "a.gguf", seed=1).read_bytes()
    b = build_tiny_codellama(tmp_path / "b.gguf", seed=1).read_bytes()
    c = build_tiny_codellama(tmp_path / "c.gguf", seed=2).read_bytes()
    assert a == b
    assert a != c


def test_cached_model_reuses_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LSP_CODER_TEST_MODELS", str(tmp_path / "cache"))
    first = cached_model("codellama", seed=3)
    mtime = first.stat().st_mtime_ns
    assert first.parent == tmp_path / "cache"
    assert cached_model("codellama", seed=3) == first
    assert first.stat().st_mtime_ns == mtime  # not rebuilt
    assert cached_model("codellama", seed=4) != first
    assert not list((tmp_path / "cache").glob("*.tmp"))
    with pytest.raises(ValueError):
        cached_model("gpt2")
    with pytest.raises(TypeError):
        cached_model("qwen")
