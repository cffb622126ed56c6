"""llama.cpp's process-wide setup and its models (through llama-cpp-python's low-level ctypes
API); ``llama_context.py`` holds the contexts, ``llama_system.py`` what the build and machine
offer. These three are the engine's only modules that call it (``backends/local_vocab.py``
reads a GGUF's vocabulary through it too).

Every call that could abort the whole process in ggml is guarded: model loading never uses
ggml's extra buffer types unless asked to (the AMX one crashes on some CPUs), and decodes are
chunked and read as ``llama_context.py`` says.
"""

from __future__ import annotations

import codecs
import ctypes
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import llama_cpp
import numpy as np

log = logging.getLogger(__name__)

_backend_lock = threading.Lock()
_backend_ready = False


LEAD_MARK = "\n"
"""Tokenized in front of a text to find where the vocabulary's own lead ends: in Llama's
SentencePiece vocabularies a newline is a byte token that no piece merges with, so the text's
tokens start right after it (where a text does merge into it, ``tokenize`` keeps the lead)."""


class ModelLoadError(RuntimeError):
    """The GGUF file could not be loaded."""


decoding = threading.local()
"""``decoding.context``: the ``Context`` whose decode runs on this thread (its cancellation
quiets llama.cpp's report of the aborted decode)."""


def _route_llama_log(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
    message = text.decode("utf-8", "replace").rstrip() if text else ""
    if not message:
        return
    ctx = getattr(decoding, "context", None)
    # An aborted decode is reported by llama.cpp as a failure; it is our cancellation.
    quiet = level != _GGML_LOG_LEVEL_ERROR or (ctx is not None and ctx.aborting)
    log.log(logging.DEBUG if quiet else logging.WARNING, "llama.cpp: %s", message)


_GGML_LOG_LEVEL_ERROR = 4
_log_callback = llama_cpp.llama_log_callback(_route_llama_log)


def init_backend() -> None:
    """Initialise ggml once per process and route llama.cpp's log to ``logging``."""
    global _backend_ready
    with _backend_lock:
        if _backend_ready:
            return
        if not os.environ.get("LSP_CODER_LLAMA_LOG"):
            llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
        _backend_ready = True


def _told(progress: Callable[[float], None], fraction: float) -> bool:
    """Pass a load's progress on; True lets llama.cpp go on (an exception must not cross C)."""
    try:
        progress(fraction)
    except Exception:  # a listener's bug must not abort the load
        log.exception("model load progress listener failed")
    return True


@dataclass(frozen=True, slots=True)
class ModelParams:
    """How to load a model file."""

    n_gpu_layers: int = 0
    use_mmap: bool = True
    use_mlock: bool = False
    use_extra_bufts: bool = False
    vocab_only: bool = False


class Model:
    """A loaded GGUF model and its vocabulary."""

    def __init__(self, path: str | Path, params: ModelParams = ModelParams(),
                 progress: Callable[[float], None] | None = None) -> None:
        """Load the file; ``progress`` hears the fraction of the weights read (0..1)."""
        init_backend()
        self.path = Path(path)
        if not self.path.is_file():
            raise ModelLoadError(f"model file not found: {self.path}")
        mp = llama_cpp.llama_model_default_params()
        mp.n_gpu_layers = params.n_gpu_layers
        mp.use_mmap = params.use_mmap
        mp.use_mlock = params.use_mlock
        mp.use_extra_bufts = params.use_extra_bufts
        mp.vocab_only = params.vocab_only
        if progress is not None:
            # NOTE: kept referenced until the load returns (llama.cpp calls it meanwhile).
            callback = llama_cpp.llama_progress_callback(lambda fraction, _: _told(progress,
                                                                                   fraction))
            mp.progress_callback = callback
        ptr = llama_cpp.llama_model_load_from_file(str(self.path).encode(), mp)
        if not ptr:
            raise ModelLoadError(f"llama.cpp could not load {self.path} (not a valid GGUF model?)")
        self._ptr = ptr
        self.vocab = llama_cpp.llama_model_get_vocab(ptr)
        self.n_vocab: int = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.bos: int = llama_cpp.llama_vocab_bos(self.vocab)
        self.eos: int = llama_cpp.llama_vocab_eos(self.vocab)
        self.eot: int = llama_cpp.llama_vocab_eot(self.vocab)
        self.add_bos: bool = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))
        self.vocab_type: int = llama_cpp.llama_vocab_type(self.vocab)
        self.fim_pre: int = llama_cpp.llama_vocab_fim_pre(self.vocab)
        self.fim_suf: int = llama_cpp.llama_vocab_fim_suf(self.vocab)
        self.fim_mid: int = llama_cpp.llama_vocab_fim_mid(self.vocab)
        self.fim_sep: int = llama_cpp.llama_vocab_fim_sep(self.vocab)
        self.fim_rep: int = llama_cpp.llama_vocab_fim_rep(self.vocab)
        self.n_layer: int = llama_cpp.llama_model_n_layer(ptr)
        self.n_embd: int = llama_cpp.llama_model_n_embd(ptr)
        self.size_bytes: int = llama_cpp.llama_model_size(ptr)
        self._piece_cache: dict[int, bytes] = {}
        self._all_pieces: list[bytes] | None = None
        self._piece_ids: dict[bytes, int] = {}
        self._prefix_index: dict[bytes, np.ndarray] = {}
        self.text_lead: list[int] = []
        """What the vocabulary puts before a text tokenized on its own (SentencePiece's
        "dummy prefix", a space, in Llama and CodeLlama vocabularies); ``tokenize`` leaves it
        out, so pieces of one text tokenized apart join without a space between them."""
        self._lead_mark: list[int] = []
        lead_mark = self._tokens(LEAD_MARK, False)
        if len(lead_mark) > 1 and self.detokenize(lead_mark) == " " + LEAD_MARK:
            self.text_lead, self._lead_mark = lead_mark[:-1], lead_mark

    def close(self) -> None:
        """Free the model; the object must not be used afterwards."""
        if getattr(self, "_ptr", None):
            llama_cpp.llama_model_free(self._ptr)
            self._ptr = None

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self.close()
        except Exception:
            pass

    @property
    def ptr(self):
        return self._ptr

    def description(self) -> str:
        buf = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_desc(self._ptr, buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    def meta(self, key: str) -> str | None:
        """A GGUF metadata value as a string, or None."""
        buf = ctypes.create_string_buffer(1024)
        n = llama_cpp.llama_model_meta_val_str(self._ptr, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", "replace") if n >= 0 else None

    def kv_bytes_per_token(self) -> int:
        """Bytes of F16 K+V cache one token costs in this model (all layers)."""
        n_head = int(self.meta(f"{self.meta('general.architecture')}.attention.head_count") or 1)
        n_head_kv = int(
            self.meta(f"{self.meta('general.architecture')}.attention.head_count_kv") or n_head
        )
        head_dim = self.n_embd // max(1, n_head)
        return 2 * 2 * self.n_layer * n_head_kv * head_dim

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        """Tokens of exactly ``text`` (no BOS, no ``text_lead``); ``special`` parses
        special-token text."""
        if not self._lead_mark or not text:
            return self._tokens(text, special)
        marked = self._tokens(LEAD_MARK + text, special)
        if marked[: len(self._lead_mark)] == self._lead_mark:
            return marked[len(self._lead_mark) :]
        return self._tokens(text, special)  # the text merged into the mark: keep the lead

    def _tokens(self, text: str, special: bool) -> list[int]:
        """llama.cpp's tokens of ``text`` (with the vocabulary's lead, if it has one)."""
        data = text.encode("utf-8")
        capacity = len(data) + 8
        buf = (llama_cpp.llama_token * capacity)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, capacity, False, special)
        if n < 0:
            capacity = -n
            buf = (llama_cpp.llama_token * capacity)()
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, capacity, False, special)
        return list(buf[: max(n, 0)])

    def piece(self, token: int) -> bytes:
        """The bytes a token stands for (special tokens render as empty)."""
        cached = self._piece_cache.get(token)
        if cached is not None:
            return cached
        buf = ctypes.create_string_buffer(64)
        n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        out = buf.raw[: max(n, 0)]
        self._piece_cache[token] = out
        return out

    def detokenize(self, tokens: list[int]) -> str:
        """Text of ``tokens``; an incomplete UTF-8 character at the end is left out."""
        data = b"".join(self.piece(t) for t in tokens)
        return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)

    def pieces(self) -> list[bytes]:
        """The bytes of every token id (built once; also indexes them for healing)."""
        if self._all_pieces is None:
            self._all_pieces = [self.piece(t) for t in range(self.n_vocab)]
            self._piece_ids = {}
            for t, p in enumerate(self._all_pieces):
                if p:
                    self._piece_ids.setdefault(p, t)
        return self._all_pieces

    def piece_id(self, piece: bytes) -> int | None:
        """The token whose bytes are ``piece`` (the lowest id if several), or None."""
        self.pieces()
        return self._piece_ids.get(piece)

    def healing_candidates(self, rest: bytes) -> np.ndarray:
        """Ids of tokens that can start text beginning with ``rest``.

        Those whose bytes start with ``rest`` (they complete it) and those whose bytes are a
        proper prefix of it (they cover part of it; the rest is healed by the next token).
        """
        cached = self._prefix_index.get(rest)
        if cached is None:
            pieces = self.pieces()
            ids = {t for t, p in enumerate(pieces) if p and p.startswith(rest)}
            for i in range(1, len(rest)):
                t = self._piece_ids.get(rest[:i])
                if t is not None:
                    ids.add(t)
            cached = np.fromiter(sorted(ids), dtype=np.int64)
            if len(self._prefix_index) > 512:
                self._prefix_index.clear()
            self._prefix_index[rest] = cached
        return cached

    def token_text(self, token: int) -> str:
        """The vocabulary's stored text for a token id (used to compare vocabularies)."""
        raw = llama_cpp.llama_vocab_get_text(self.vocab, token)
        return raw.decode("utf-8", "replace") if raw else ""

    def is_eog(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))
