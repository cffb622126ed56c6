"""Long prompt reads on a second context over the same weights, left plain (not repacked).

On x86 CPUs this llama.cpp's repacked Q4_K weights (ggml's extra buffer types) decode a token
10-20 % faster than plain ones but read a prompt about 1.4x slower: plain weights take ggml's
tiled matrix kernels, repacked ones cannot. The engine keeps the repacked weights for decoding
and hands each long read to a ``ReadAside``: a context on the same file mapped a second time
with the extra buffer types off. It keeps about one more copy of the weights resident (the
main model's repacked tensors are copies, the reader's are the file's pages), a KV cache and
compute buffers: 1.26 GB of RSS with the embedded 1.5B. It mirrors one sequence of the main
context: it takes the cells the main sequence holds and the mirror lacks, reads the new tokens,
and hands their cells back. Moving cells is a memory copy (28 KB a token for the 1.5B model),
under 1 % of reading them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import psutil

from .llama import Model, ModelParams
from .llama_context import Context, ContextParams, DecodeAborted, KvCacheFull
from .llama_system import build_has_tiled_kernels
from .prefix_cache.shifting import common_prefix

MIN_TOKENS = 32
"""The shortest read the reader takes (shorter ones are mostly fixed costs: 0.9x at 16)."""
MAX_CTX = 4096
"""The most cells the reader holds: a longer prompt is read on the main context."""
MEMORY_FACTOR = 4
"""With ``model.read_aside = "auto"``, the memory available at load must hold this many times
the weights for the reader to load (it keeps about one more copy of them resident)."""

MIRROR = 0
"""The reader's sequence that mirrors the main sequence last read for."""
SCRATCH = 1
"""The reader's sequence that cells pass through on their way in and out."""


def read_aside_enabled(setting: str, params: ModelParams, weights_bytes: int,
                       available_bytes: int) -> bool:
    """Resolve ``model.read_aside``: only repacked weights on the CPU, mapped from the file
    (a second load shares its pages), can have a reader; "auto" where plain weights read
    faster and the memory available holds ``MEMORY_FACTOR`` times the weights."""
    if setting == "false" or not params.use_extra_bufts or not params.use_mmap:
        return False
    if params.n_gpu_layers != 0:
        return False
    if setting == "true":
        return True
    return build_has_tiled_kernels() and available_bytes >= MEMORY_FACTOR * weights_bytes


def open_read_aside(path: Path, params: ModelParams, ctx_params: ContextParams,
                    setting: str) -> ReadAside | None:
    """The reader for the model at ``path`` loaded with ``params`` into contexts of
    ``ctx_params``, where ``setting`` (``model.read_aside``) and the machine want one.

    Raises:
        ModelLoadError: llama.cpp could not load the file a second time.
    """
    if not read_aside_enabled(setting, params, path.stat().st_size,
                              psutil.virtual_memory().available):
        return None
    if ctx_params.n_batch < ctx_params.n_seq_max + 1:
        return None  # llama.cpp needs an output row per sequence, the scratch one too
    model = Model(path, replace(params, use_extra_bufts=False))
    return ReadAside(model, replace(ctx_params, n_ctx=min(ctx_params.n_ctx, MAX_CTX)),
                     MIN_TOKENS)


class AsideFailed(RuntimeError):
    """Cells could not be moved (no room); the main context reads the tokens itself."""


class ReadAside:
    """A plain-weights context that reads long runs of tokens for a main context's sequences.

    Args:
        model: the main model's file loaded again with the extra buffer types off.
        params: the main context's sizes (the reader holds 2 sequences, ``n_ctx`` cells).
        min_tokens: the shortest read worth handing over.
    """

    def __init__(self, model: Model, params: ContextParams, min_tokens: int) -> None:
        self.model = model
        self.ctx = Context(model, replace(params, n_seq_max=2))
        self.min_tokens = min_tokens
        self.tokens: list[int] = []
        """What the mirror sequence holds, from position 0."""
        self.read_tokens = 0
        """Tokens read here since the engine loaded."""

    def takes(self, held: int, new: int) -> bool:
        """Whether a read of ``new`` tokens after ``held`` ones comes here."""
        return new >= self.min_tokens and held + new <= self.ctx.n_ctx

    def read(self, main: Context, seq_id: int, scratch: int, held: list[int],
             tokens: list[int]) -> int:
        """Evaluate ``tokens`` at positions ``len(held)..`` of ``main``'s ``seq_id``, which holds
        ``held``; ``scratch`` is a sequence of ``main`` nothing else uses.

        Returns:
            How many leading tokens ``main`` now holds: all, unless the reader ran out of
            cells (the caller reads the rest).

        Raises:
            DecodeAborted: ``main.cancel_check`` stopped it; ``done`` tokens are in ``main``.
            AsideFailed: no room to move cells; ``main`` holds none of ``tokens``.
        """
        self._mirror(main, seq_id, scratch, held)
        pos0 = len(held)
        done = len(tokens)
        aborted: DecodeAborted | None = None
        self.ctx.cancel_check = main.cancel_check
        try:
            self.ctx.decode(tokens, pos0, MIRROR, n_logits=0)
        except DecodeAborted as exc:
            done, aborted = exc.done, exc
        except KvCacheFull as exc:
            done = exc.done
        finally:
            self.ctx.cancel_check = None
        self.ctx.seq_rm(MIRROR, pos0 + done, -1)
        self.tokens = held + tokens[:done]
        if done:
            if not _move(self.ctx, MIRROR, SCRATCH, pos0, main, seq_id, scratch):
                raise AsideFailed("the main context has no room for the cells read")
            self.read_tokens += done
        if aborted is not None:
            raise DecodeAborted(done) from aborted
        return done

    def _mirror(self, main: Context, seq_id: int, scratch: int, held: list[int]) -> None:
        """Make the mirror hold ``held``, taking what it lacks from ``main``'s ``seq_id``."""
        common = common_prefix(self.tokens, held)
        if common < len(self.tokens):
            self.ctx.seq_rm(MIRROR, common, -1)
            self.tokens = self.tokens[:common]
        if common < len(held):
            if not _move(main, seq_id, scratch, common, self.ctx, MIRROR, SCRATCH):
                raise AsideFailed("the reader has no room for the sequence's cells")
            self.tokens = list(held)

    def close(self) -> None:
        self.ctx.close()
        self.model.close()


def _move(src: Context, src_seq: int, src_scratch: int, p0: int,
          dst: Context, dst_seq: int, dst_scratch: int) -> bool:
    """Copy the cells of ``src_seq`` from position ``p0`` on to the end of ``dst_seq``.

    A state holds whole sequences, so the part goes through a scratch sequence on each side:
    shared into ``src_scratch`` (no copy), taken out, put into ``dst_scratch`` and shared on.
    """
    src.seq_cp(src_seq, src_scratch, p0, -1)
    try:
        state = src.seq_state(src_scratch)
    finally:
        src.seq_rm(src_scratch, -1, -1)
    try:
        if not state or not dst.set_seq_state(dst_scratch, state):
            return False
        dst.seq_cp(dst_scratch, dst_seq, -1, -1)
        return True
    finally:
        dst.seq_rm(dst_scratch, -1, -1)
