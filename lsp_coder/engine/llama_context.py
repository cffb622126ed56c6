"""A llama.cpp context: several sequences over one unified KV cache, decoded in ubatches.

Decodes are chunked to ``n_ubatch`` (never more than ``n_batch``) and logits are read only for
rows marked for output: ggml aborts the whole process otherwise.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Callable

import llama_cpp
import numpy as np

from .llama import Model, ModelLoadError, decoding


class KvCacheFull(RuntimeError):
    """llama_decode found no free KV cells for a chunk; ``done`` tokens of the call were kept."""

    def __init__(self, done: int) -> None:
        super().__init__(f"KV cache full after {done} tokens")
        self.done = done


class DecodeAborted(RuntimeError):
    """``cancel_check`` stopped a decode; ``done`` tokens of the call were kept."""

    def __init__(self, done: int) -> None:
        super().__init__(f"decode aborted after {done} tokens")
        self.done = done


class DecodeError(RuntimeError):
    """llama_decode failed for another reason."""


@dataclass(frozen=True, slots=True)
class ContextParams:
    """Sizes of one llama.cpp context."""

    n_ctx: int = 8192
    """KV cache cells, shared by all sequences."""
    n_batch: int = 512
    """Most tokens one ``decode`` call takes."""
    n_ubatch: int = 512
    """Most tokens llama.cpp computes at once inside a batch."""
    n_seq_max: int = 8
    """Sequences the context holds at once (the prefix cache keeps prompts in them)."""
    n_threads: int = 0
    """CPU threads for decoding and prompt reading; 0: one per CPU."""
    kv_unified: bool = True
    """One KV buffer for all sequences, so a sequence may use any free cell."""


class Context:
    """A llama.cpp context with several sequences over one unified KV cache.

    Not thread-safe: one worker thread owns it. ``cancel_check`` (set per request) is polled
    between ubatches and by ggml's abort callback; True stops the running decode.
    """

    def __init__(self, model: Model, params: ContextParams = ContextParams()) -> None:
        self.model = model
        self.params = params
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = params.n_ctx
        cp.n_batch = params.n_batch
        cp.n_ubatch = min(params.n_ubatch, params.n_batch)
        cp.n_seq_max = params.n_seq_max
        threads = params.n_threads or max(1, os.cpu_count() or 1)
        cp.n_threads = threads
        cp.n_threads_batch = threads
        cp.kv_unified = params.kv_unified
        cp.no_perf = True
        self.cancel_check: Callable[[], bool] | None = None
        self._abort_cb = llama_cpp.ggml_abort_callback(lambda _data: self.aborting)
        cp.abort_callback = self._abort_cb
        ptr = llama_cpp.llama_init_from_model(model.ptr, cp)
        if not ptr:
            raise ModelLoadError(f"could not create a context of {params.n_ctx} tokens")
        self._ptr = ptr
        llama_cpp.llama_set_abort_callback(ptr, self._abort_cb, ctypes.c_void_p(0))
        self.n_ctx: int = llama_cpp.llama_n_ctx(ptr)
        self.n_ubatch = min(cp.n_ubatch, llama_cpp.llama_n_ubatch(ptr),
                            llama_cpp.llama_n_batch(ptr))
        self.n_seq_max: int = llama_cpp.llama_n_seq_max(ptr)
        self._mem = llama_cpp.llama_get_memory(ptr)
        self.can_shift: bool = bool(llama_cpp.llama_memory_can_shift(self._mem))
        self._batch = llama_cpp.llama_batch_init(self.n_ubatch, 0, 1)
        self._n_outputs = 0
        self._n_vocab = model.n_vocab
        self.ubatches_done = 0
        """llama_decode calls that finished (any thread may read it: a progress clock)."""

    def close(self) -> None:
        if getattr(self, "_ptr", None):
            llama_cpp.llama_batch_free(self._batch)
            llama_cpp.llama_free(self._ptr)
            self._ptr = None

    def __del__(self) -> None:  # pragma: no cover
        try:
            self.close()
        except Exception:
            pass

    # -- cancellation -------------------------------------------------------------------------

    @property
    def aborting(self) -> bool:
        """Whether the current ``cancel_check`` asks the decode to stop."""
        check = self.cancel_check
        return check is not None and check()

    # -- decoding -----------------------------------------------------------------------------

    def decode(self, tokens: list[int], pos0: int, seq_id: int, *, n_logits: int = 1) -> int:
        """Evaluate ``tokens`` at positions ``pos0..`` of ``seq_id``.

        Args:
            tokens: the tokens, any number (chunked by ``n_ubatch``).
            pos0: position of the first token.
            seq_id: the sequence they extend.
            n_logits: how many of the last tokens get logits (read with ``logits``).

        Returns:
            The number of logits rows available, ``min(n_logits, len(tokens))``.

        Raises:
            KvCacheFull: no cells for a chunk; earlier chunks are kept (``done``).
            DecodeAborted: the abort flag stopped it; earlier chunks are kept (``done``).
            DecodeError: any other failure.
        """
        if not self._ptr:
            raise DecodeError("context is closed")
        n = len(tokens)
        n_logits = max(0, min(n_logits, n))
        first_logit = n - n_logits
        done = 0
        self._n_outputs = 0
        while done < n:
            if self.aborting:
                raise DecodeAborted(done)
            chunk = tokens[done : done + self.n_ubatch]
            batch = self._batch
            m = len(chunk)
            outputs = 0
            for i, tok in enumerate(chunk):
                batch.token[i] = tok
                batch.pos[i] = pos0 + done + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = seq_id
                want = done + i >= first_logit
                batch.logits[i] = want
                outputs += want
            batch.n_tokens = m
            decoding.context = self
            try:
                rc = llama_cpp.llama_decode(self._ptr, batch)
            finally:
                decoding.context = None
            if rc == 1:
                raise KvCacheFull(done)
            if rc == 2:
                raise DecodeAborted(done)
            if rc != 0:
                raise DecodeError(f"llama_decode returned {rc}")
            self.ubatches_done += 1
            done += m
            self._n_outputs = outputs
        return self._n_outputs

    def logits(self, row: int) -> np.ndarray:
        """Logits of output row ``row`` of the last decode (0-based, among marked tokens)."""
        if not 0 <= row < self._n_outputs:
            raise IndexError(f"logits row {row} not computed (have {self._n_outputs})")
        ptr = llama_cpp.llama_get_logits_ith(self._ptr, row - self._n_outputs)
        if not ptr:
            raise DecodeError("llama.cpp returned no logits")
        return np.ctypeslib.as_array(ptr, shape=(self._n_vocab,)).copy()

    # -- KV memory ----------------------------------------------------------------------------

    def seq_rm(self, seq_id: int, p0: int, p1: int = -1) -> bool:
        """Remove positions [p0, p1) of a sequence (-1: to the end; seq -1: all)."""
        return bool(llama_cpp.llama_memory_seq_rm(self._mem, seq_id, p0, p1))

    def seq_cp(self, src: int, dst: int, p0: int, p1: int) -> None:
        """Share positions [p0, p1) of ``src`` with ``dst`` (no copy, no compute)."""
        llama_cpp.llama_memory_seq_cp(self._mem, src, dst, p0, p1)

    def seq_add(self, seq_id: int, p0: int, p1: int, delta: int) -> None:
        """Shift positions [p0, p1) of a sequence by ``delta`` (RoPE shift, approximate)."""
        llama_cpp.llama_memory_seq_add(self._mem, seq_id, p0, p1, delta)

    def seq_pos_max(self, seq_id: int) -> int:
        """Largest position held by the sequence, -1 if empty."""
        return int(llama_cpp.llama_memory_seq_pos_max(self._mem, seq_id))

    def seq_state(self, seq_id: int) -> bytearray:
        """The KV cells of a sequence (its positions and their keys and values), to be put into
        another context on the same model with ``set_seq_state``."""
        size = llama_cpp.llama_state_seq_get_size(self._ptr, seq_id)
        state = bytearray(size)
        got = llama_cpp.llama_state_seq_get_data(
            self._ptr, (ctypes.c_ubyte * size).from_buffer(state), size, seq_id)
        return state if got == size else state[:got]

    def set_seq_state(self, seq_id: int, state: bytearray) -> bool:
        """Make ``seq_id`` hold the cells of ``state`` (what it held before is removed);
        False when llama.cpp finds no room or cannot read it."""
        size = len(state)
        buf = (ctypes.c_ubyte * size).from_buffer(state)
        return llama_cpp.llama_state_seq_set_data(self._ptr, buf, size, seq_id) == size

    def clear(self) -> None:
        llama_cpp.llama_memory_clear(self._mem, True)
