"""The engine: target model (and optional draft model), their caches and the decode loop."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from ..config import Config
from ..load_progress import LoadProgress, load_key
from ..shared_types import PrefillResult, StopReason
from .costs import CALIBRATION_SIZES, BatchCosts
from .costs_store import CostsStore, costs_key
from .fim_template import FimTemplate
from .generate_request import GenerateRequest, GenerateResult
from .generator import Generator
from .greedy_memory import GreedyMemory
from .llama import Model, ModelLoadError, ModelParams
from .llama_context import Context, ContextParams
from .llama_system import build_has_amx
from .load_costs import batch_costs, draft_left_out
from .prefill import prefill
from .prefix_cache.manager import PrefixCache
from .read_aside import ReadAside, open_read_aside
from .speculative import Drafter, DraftModel, NGramLookup, PreviousSuggestion, vocab_mismatch

log = logging.getLogger(__name__)

LOAD_STEPS = 1000
"""The resolution of a weights-read stage: llama.cpp reports a fraction."""

@dataclass(frozen=True, slots=True)
class MemoryStats:
    """How full the target's prefix cache is (for ``lspCoder.stats``)."""

    kv_used_bytes: int
    """KV memory held by cached tokens."""
    kv_budget_bytes: int
    """The most KV memory the cache may hold."""
    kv_evicted_blocks: int
    """Blocks evicted since the engine loaded."""
    idle_used_tokens: int
    """Tokens evaluated as idle work (``prefill``) that a request then reused."""


def extra_bufts_enabled(setting: str) -> bool:
    """Resolve ``model.use_extra_bufts``: "auto" enables them unless ggml was built with AMX."""
    if setting == "auto":
        return not build_has_amx()
    return setting == "true"


class Engine:
    """Owns the llama.cpp models and contexts; use from one worker thread."""

    def __init__(self, model_path: Path, draft_path: Path | None, config: Config,
                 progress: LoadProgress | None = None, costs_file: Path | None = None) -> None:
        """Load the models; ``progress`` hears each file's weights read as its ``load:<file>``
        stage; ``costs_file`` keeps the measured batch costs for the next load."""
        self.config = config
        self._progress = progress
        self._costs_store = CostsStore(costs_file) if costs_file is not None else None
        self.costs_from: dict[str, str] = {}
        """Per model file name: whether its batch costs were "measured" or "stored"."""
        self.warnings: list[str] = []
        mc = config.model
        params = ModelParams(n_gpu_layers=mc.n_gpu_layers, use_mmap=mc.use_mmap,
                             use_mlock=mc.use_mlock,
                             use_extra_bufts=extra_bufts_enabled(mc.use_extra_bufts))
        self.model_params = params
        self.model = Model(model_path, params, self._load_progress(model_path))
        ctx_params = ContextParams(n_ctx=mc.n_ctx, n_batch=mc.n_batch, n_ubatch=mc.n_ubatch,
                                   n_seq_max=mc.n_seq_max, n_threads=mc.n_threads)
        self.aside = self._read_aside(model_path, params, ctx_params)
        main_params = ctx_params if self.aside is None else replace(
            ctx_params, n_seq_max=ctx_params.n_seq_max + 1)  # the cells' way in from the aside
        self.ctx = Context(self.model, main_params)
        # What verification batches cost here decides how much (if anything) to draft.
        self.costs = self._batch_costs(self.model, self.ctx, ctx_params, CALIBRATION_SIZES,
                                       self.aside)
        cc = config.cache
        self.cache = PrefixCache(self.ctx, aside=self.aside, block_size=cc.block_size,
                                 budget_tokens=cc.kv_budget_tokens, reuse=cc.reuse,
                                 shift_min=cc.shift_min_tokens if cc.shift_reuse else 0)
        self.model.pieces()  # index the vocabulary now, not on the first keystroke
        self.architecture = self.model.meta("general.architecture") or ""
        self.template = self._fim_template(self.model)
        if not self.template.has_fim:
            self.warnings.append(
                f"{model_path.name} has no fill-in-the-middle tokens: completing from the text"
                " before the cursor only (use a FIM-capable code model for better results)"
            )
        self.draft: DraftModel | None = None
        self.draft_left_out = ""
        """Why the configured draft model was not loaded ("" when it was or none is set)."""
        if draft_path is not None and config.speculative.draft_model:
            if config.speculative.draft_model == "auto":
                self.draft_left_out = draft_left_out(self.costs, model_path, draft_path,
                                                     config.speculative.max_draft)
            if not self.draft_left_out:
                self.draft = self._load_draft(draft_path, params, ctx_params)
        self.generator = Generator(self.model, self.cache, self._drafters(), costs=self.costs,
                                   memory=GreedyMemory())
        self.generator.use_memory = config.speculative.greedy_memory

    def _read_aside(self, path: Path, params: ModelParams,
                    ctx_params: ContextParams) -> ReadAside | None:
        """The plain-weights reader of long prompts, where ``model.read_aside`` wants one."""
        try:
            return open_read_aside(path, params, ctx_params, self.config.model.read_aside)
        except (ModelLoadError, OSError) as exc:
            self.warnings.append(f"prompts are read on the repacked weights ({exc})")
            return None

    def _load_progress(self, path: Path) -> Callable[[float], None] | None:
        """The fraction-of-weights callback for the stage that reads ``path``."""
        stage = self._progress.stage(load_key(path.name)) if self._progress else None
        if stage is None:
            return None
        return lambda fraction: stage(int(fraction * LOAD_STEPS), LOAD_STEPS)

    def _load_draft(self, path: Path, params: ModelParams, ctx_params: ContextParams):
        try:
            return self._open_draft(path, params, ctx_params)
        except (ModelLoadError, OSError, ValueError) as exc:
            self.warnings.append(f"draft model {path} not used ({exc}); completing without a"
                                 " draft model (fix [model] draft_path in the config)")
            return None

    def _open_draft(self, path: Path, params: ModelParams, ctx_params: ContextParams):
        model = Model(path, params, self._load_progress(path))
        why = vocab_mismatch(self.model, model)
        if why is not None:
            self.warnings.append(f"draft model {path.name} not used: its vocabulary {why}")
            model.close()
            return None
        ctx = Context(model, ctx_params)
        # Only its single-token and prefill times are used (to weigh drafting against them).
        costs = self._batch_costs(model, ctx, ctx_params, (1, 2))
        cc = self.config.cache
        cache = PrefixCache(ctx, block_size=cc.block_size, budget_tokens=cc.kv_budget_tokens,
                            reuse=cc.reuse,
                            shift_min=cc.shift_min_tokens if cc.shift_reuse else 0)
        return DraftModel(model, ctx, cache, self.config.speculative.p_min,
                          token_ms=costs.ms(1), prefill_token_ms=costs.prefill_token_ms,
                          max_k=self.config.speculative.max_draft)

    def _batch_costs(self, model: Model, ctx: Context, ctx_params: ContextParams,
                     sizes: tuple[int, ...], aside: ReadAside | None = None) -> BatchCosts:
        """``model``'s batch costs (``load_costs.batch_costs``), noted in ``costs_from``."""
        store = self._costs_store
        key = costs_key(model.path, self.model_params, ctx_params, sizes,
                        aside is not None) if store else ""
        costs, how = batch_costs(store, key, model, ctx, sizes, aside)
        self.costs_from[model.path.name] = how
        return costs

    def _drafters(self) -> list[Drafter]:
        sc = self.config.speculative
        drafters: list[Drafter] = []
        if sc.previous_suggestion:
            drafters.append(PreviousSuggestion(self.model))
        if sc.ngram:
            drafters.append(NGramLookup(max_k=sc.max_draft))
        if self.draft is not None:
            drafters.append(self.draft)
        return drafters

    @staticmethod
    def _fim_template(model: Model) -> FimTemplate:
        bos = model.bos if model.add_bos else -1
        if min(model.fim_pre, model.fim_suf, model.fim_mid) < 0:
            return FimTemplate(bos=bos)
        return FimTemplate(model.fim_pre, model.fim_suf, model.fim_mid, model.fim_sep, bos=bos,
                           prefix_lead=tuple(model.text_lead),
                           repo_name=model.fim_rep)

    # -- used from the worker thread ------------------------------------------------------------

    def tokenize(self, text: str) -> list[int]:
        return self.model.tokenize(text)

    def detokenize(self, tokens: list[int]) -> str:
        return self.model.detokenize(tokens)

    def generate(self, req: GenerateRequest) -> GenerateResult:
        if not self.config.speculative.enabled:
            req.speculative = False
        if self.draft is not None:
            self.draft.ctx.cancel_check = req.cancelled
        try:
            result = self.generator.generate(req)
        finally:
            if self.draft is not None:
                self.draft.ctx.cancel_check = None
        if result.stop_reason != StopReason.CANCELLED:
            self.costs.observe_prefill(result.stats.evaluated_tokens, result.stats.prefill_ms)
        return result

    def prefill(self, tokens: list[int], cancelled: Callable[[], bool] = lambda: False,
                stop: Callable[[], bool] = lambda: False, in_view: bool = False,
                document: str | None = None) -> PrefillResult:
        """Evaluate ``tokens`` into the prefix cache as idle work (see ``engine.prefill``)."""
        result = prefill(self.cache, tokens, cancelled, self.config.idle.chunk_tokens, stop,
                         in_view, document)
        if result.outcome == "done":
            self.costs.observe_prefill(result.evaluated_tokens, result.prefill_ms)
        return result

    def cached_prefix(self, tokens: list[int]) -> int:
        """How many leading tokens of ``tokens`` the prefix cache holds (nothing is changed)."""
        return self.cache.lookup(tokens)[1]

    @property
    def prefill_token_ms(self) -> float:
        """What evaluating one prompt token costs here (measured at load, then by prefills)."""
        return self.costs.prefill_token_ms

    @property
    def ubatches_done(self) -> int:
        """How many ubatches the target model has evaluated (a clock for scheduling checks)."""
        return self.ctx.ubatches_done + (self.aside.ctx.ubatches_done if self.aside else 0)

    def update(self, config: Config) -> None:
        """Take new settings that need no reload (speculation, cutoffs)."""
        self.config = config
        self.generator.use_memory = config.speculative.greedy_memory
        if self.draft is not None:
            self.draft.p_min = config.speculative.p_min

    def memory_stats(self) -> MemoryStats:
        """The prefix cache's use of KV memory now."""
        return MemoryStats(
            kv_used_bytes=self.cache.used_bytes,
            kv_budget_bytes=self.cache.budget * self.model.kv_bytes_per_token(),
            kv_evicted_blocks=self.cache.evicted_blocks,
            idle_used_tokens=self.cache.idle_used_tokens)

    def describe(self) -> dict:
        """Model, template and memory figures (for ``doctor`` and the log)."""
        kv_token = self.model.kv_bytes_per_token()
        out = {
            "model": str(self.model.path),
            "description": self.model.description(),
            "architecture": self.architecture,
            "weights_bytes": self.model.size_bytes,
            "n_ctx": self.ctx.n_ctx,
            "n_seq_max": self.ctx.n_seq_max,
            "kv_bytes_per_token": kv_token,
            "kv_bytes": kv_token * self.ctx.n_ctx,
            "fim": None if not self.template.has_fim else {
                "prefix": self.model.token_text(self.template.prefix),
                "suffix": self.model.token_text(self.template.suffix),
                "middle": self.model.token_text(self.template.middle),
                "eot": self.model.token_text(self.model.eot) if self.model.eot >= 0 else None,
            },
            "extra_bufts": self.model_params.use_extra_bufts,
            "read_aside": self.aside is not None,
            "read_aside_kv_bytes": 0 if self.aside is None else kv_token * self.aside.ctx.n_ctx,
            "read_aside_weights_bytes": 0 if self.aside is None else self.aside.model.size_bytes,
            "can_shift": self.ctx.can_shift,
            "batch_ms": self.costs.as_dict(),
            "batch_costs": dict(self.costs_from),
            "draft": None if self.draft is None else str(self.draft.model.path),
            "draft_left_out": self.draft_left_out,
            "draft_weights_bytes": 0 if self.draft is None else self.draft.model.size_bytes,
            "draft_kv_bytes": 0 if self.draft is None else (
                self.draft.model.kv_bytes_per_token() * self.draft.ctx.n_ctx),
            "warnings": list(self.warnings),
        }
        return out

    def close(self) -> None:
        if self.draft is not None:
            self.draft.ctx.close()
            self.draft.model.close()
        if self.aside is not None:
            self.aside.close()
        self.ctx.close()
        self.model.close()
