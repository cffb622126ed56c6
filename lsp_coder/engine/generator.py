"""The decode loop: prefill from the prefix cache, then greedy or sampled decoding with drafts."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .costs import BatchCosts, DrafterRecord
from .greedy_memory import GreedyMemory
from .llama import Context, DecodeAborted, Model
from .prefix_cache.manager import PrefixCache
from .sampling import pick, verify
from .speculative import Drafter

log = logging.getLogger(__name__)

StopRule = Callable[[str], int | None]
"""Given the text generated so far, the length to cut it to and stop, or None to go on."""


@dataclass(slots=True)
class GenerateRequest:
    prompt: list[int]
    max_tokens: int = 64
    temperature: float = 0.0
    seed: int = 0
    hint: list[int] = field(default_factory=list)
    corpus: list[int] = field(default_factory=list)
    heal: str = ""
    stop: StopRule | None = None
    speculative: bool = True
    cancelled: Callable[[], bool] = lambda: False
    on_text: Callable[[str], None] | None = None


@dataclass(slots=True)
class RequestStats:
    prompt_tokens: int = 0
    reused_tokens: int = 0
    shifted_tokens: int = 0
    evaluated_tokens: int = 0
    generated_tokens: int = 0
    prefill_ms: float = 0.0
    decode_ms: float = 0.0
    decode_steps: int = 0
    draft_proposed: dict[str, int] = field(default_factory=dict)
    draft_accepted: dict[str, int] = field(default_factory=dict)
    near_ties: int = 0
    known_tokens: int = 0
    """Generated tokens taken from the greedy memory (verified without a decode)."""


@dataclass(slots=True)
class GenerateResult:
    text: str
    tokens: list[int]
    stop_reason: str
    stats: RequestStats


_FREE_CATCHUP = 32
"""Context a drafter may read before drafting without weighing its cost (a few keystrokes)."""

_NEAR_TIE = 0.05
"""Logit gap under which batch numerics may flip a greedy choice (recorded, not hidden)."""


class Generator:
    """Runs one request at a time on the target context (call from the worker thread only)."""

    def __init__(self, model: Model, cache: PrefixCache, drafters: Sequence[Drafter] = (),
                 max_draft: int = 8, costs: BatchCosts | None = None,
                 memory: GreedyMemory | None = None) -> None:
        self.model = model
        self.memory = memory
        self.use_memory = True
        """Whether remembered greedy picks may be taken (they are always remembered)."""
        self.cache = cache
        self.ctx: Context = cache.ctx
        self.drafters = list(drafters)
        # The rest of a suggestion is drafted up to 16 at a time: it is usually right whole.
        self.records = {d.name: DrafterRecord(max_k=16 if d.name == "previous" else max_draft,
                                              prior_accepted=d.prior[0],
                                              prior_rejected=d.prior[1],
                                              prior_draft_ms=d.token_ms)
                        for d in self.drafters}
        self.costs = costs or BatchCosts({1: 40.0, 2: 60.0, 4: 100.0, 8: 200.0, 16: 300.0})

    def generate(self, req: GenerateRequest) -> GenerateResult:
        """Complete ``req.prompt``; stops at EOG, ``max_tokens``, the stop rule or cancellation."""
        stats = RequestStats(prompt_tokens=len(req.prompt))
        rng = np.random.default_rng(req.seed)
        out: list[int] = []
        reason = "max_tokens"
        heal = req.heal.encode("utf-8")
        greedy = req.temperature <= 0
        constrained_until = 0  # the tokens of ``out`` before it were picked under healing
        next_token, constrained = -1, False
        t0 = time.perf_counter()
        t_decode: float | None = None
        self.ctx.clear_abort()
        self.ctx.cancel_check = req.cancelled
        try:
            if greedy and req.speculative and self.use_memory and self.memory is not None:
                reason, heal = self._recall(req, out, heal)
                stats.known_tokens = len(out)
                stats.decode_ms = (time.perf_counter() - t0) * 1000
                if reason != "open":
                    stats.reused_tokens = len(req.prompt)  # nothing had to be evaluated
                    return self._finish(req, out, reason, stats)
                reason = "max_tokens"
                t0 = time.perf_counter()
            history = req.prompt + out
            stats.prompt_tokens = len(history)
            prepared = self.cache.prepare(history)
            stats.reused_tokens = prepared.reused
            stats.shifted_tokens = prepared.shifted
            stats.evaluated_tokens = len(history) - prepared.reused
            seq = prepared.seq_id
            self.cache.extend(seq, history[prepared.reused :], n_logits=1)
            stats.prefill_ms = (time.perf_counter() - t0) * 1000
            next_token, heal, constrained = self._next(self.ctx.logits(0), heal,
                                                       req.temperature, rng)
            for drafter in self.drafters:
                drafter.begin(req.prompt, req.hint, req.corpus)
            t_decode = time.perf_counter()
            while True:
                if req.cancelled():
                    reason = "cancelled"
                    break
                if self.model.is_eog(next_token):
                    reason = "eog"
                    break
                if len(out) >= req.max_tokens:
                    break
                token = next_token
                out.append(token)
                if constrained:
                    constrained_until = len(out)
                _, stop_now = self._emit(out, req)
                if stop_now:
                    reason = "stop"
                    break
                if len(out) >= req.max_tokens:
                    break
                step_start = time.perf_counter()
                drafted = (self._draft(req.prompt + out, len(out), req)
                           if req.speculative and not heal else None)
                if drafted is None:
                    self.cache.extend(seq, [token], n_logits=1)
                    self.costs.observe(1, (time.perf_counter() - step_start) * 1000)
                    next_token, heal, constrained = self._next(self.ctx.logits(0), heal,
                                                               req.temperature, rng)
                    stats.decode_steps += 1
                    continue
                name, draft = drafted
                verify_start = time.perf_counter()
                n_rows = self.cache.extend(seq, [token] + draft.tokens,
                                           n_logits=len(draft.tokens) + 1)
                self.costs.observe(n_rows, (time.perf_counter() - verify_start) * 1000)
                rows = [self.ctx.logits(i) for i in range(n_rows)]
                verdict = verify(rows, draft.tokens, req.temperature, rng,
                                 draft.probs if req.temperature > 0 else None)
                stats.near_ties += _count_near_ties(rows[: verdict.accepted + 1])
                accepted = draft.tokens[: verdict.accepted]
                self.cache.truncate(seq, len(req.prompt) + len(out) + len(accepted))
                self._record(name, len(draft.tokens), len(accepted), draft.cost_ms,
                             (time.perf_counter() - step_start) * 1000, stats)
                stats.decode_steps += 1
                next_token = verdict.token
                constrained = False
                eog_at = next((i for i, t in enumerate(accepted) if self.model.is_eog(t)), None)
                if eog_at is not None:
                    accepted, next_token = accepted[:eog_at], accepted[eog_at]
                out.extend(accepted)
                for drafter in self.drafters:
                    drafter.accepted(req.prompt + out)
                if accepted:
                    _, stop_now = self._emit(out, req)
                    if stop_now:
                        reason = "stop"
                        break
        except DecodeAborted:
            reason = "cancelled"
            stats.prefill_ms = stats.prefill_ms or (time.perf_counter() - t0) * 1000
        finally:
            if t_decode is not None:
                stats.decode_ms += (time.perf_counter() - t_decode) * 1000
            self.ctx.cancel_check = None
            self.ctx.clear_abort()
        if greedy and self.memory is not None:
            ended = [next_token] if reason == "eog" and not constrained else []
            self.memory.remember(req.prompt + out + ended, len(req.prompt) + constrained_until)
        return self._finish(req, out, reason, stats)

    def _finish(self, req: GenerateRequest, out: list[int], reason: str,
                stats: RequestStats) -> GenerateResult:
        stats.generated_tokens = len(out)
        log.debug("generate: prompt %d reused %d hint %d -> %d tokens (%d known, %s) in %.0f ms"
                  " decode, %d steps, drafts %s/%s", len(req.prompt), stats.reused_tokens,
                  len(req.hint), len(out), stats.known_tokens, reason, stats.decode_ms,
                  stats.decode_steps, stats.draft_accepted, stats.draft_proposed)
        text = self._text(out, req)
        cut = req.stop(text) if req.stop is not None else None
        return GenerateResult(text if cut is None else text[:cut], out, reason, stats)

    def _recall(self, req: GenerateRequest, out: list[int], heal: bytes) -> tuple[str, bytes]:
        """Take the remembered greedy continuation of ``req.prompt`` into ``out``.

        Returns why generation ended within it ("open" if it goes on) and the healing text
        still to be matched. A remembered token is the target's unconstrained argmax, so it is
        also its pick under the healing constraint whenever the constraint allows it.
        """
        reason = "open"
        for token in self.memory.continuation(req.prompt) if self.memory else []:
            if len(out) >= req.max_tokens:
                reason = "max_tokens"
                break
            if self.model.is_eog(token):
                reason = "eog"
                break
            if heal:
                if token not in self.model.healing_candidates(heal):
                    break
                piece = self.model.piece(token)
                heal = b"" if piece.startswith(heal) else heal[len(piece) :]
            out.append(token)
            _, stop_now = self._emit(out, req)
            if stop_now:
                reason = "stop"
                break
        else:
            if out and len(out) >= req.max_tokens:
                reason = "max_tokens"
        return reason, heal

    def _next(self, logits: np.ndarray, rest: bytes, temperature: float,
              rng: np.random.Generator) -> tuple[int, bytes, bool]:
        """The next token, what of the healing text ``rest`` is left after it, and whether
        the constraint changed the pick (it is then no greedy pick to remember)."""
        if not rest:
            return pick(logits, temperature, rng), b"", False
        allowed = self.model.healing_candidates(rest)
        if len(allowed) == 0:
            return pick(logits, temperature, rng), b"", True
        token = int(allowed[pick(logits[allowed], temperature, rng)])
        piece = self.model.piece(token)
        left = b"" if piece.startswith(rest) else rest[len(piece) :]
        return token, left, temperature > 0 or token != int(np.argmax(logits))

    def _text(self, out: list[int], req: GenerateRequest) -> str:
        text = self.model.detokenize(out)
        return text[len(req.heal) :] if req.heal and text.startswith(req.heal) else text

    def _draft(self, history: list[int], n_out: int, req: GenerateRequest):
        """The first drafter, cheapest first, whose draft is worth verifying now."""
        limit = min(req.max_tokens - n_out, self.ctx.n_ubatch - 1)
        for drafter in self.drafters:
            record = self.records[drafter.name]
            k = record.choose_k(self.costs, limit)
            if k <= 0:
                continue
            catchup = drafter.catchup(history)
            if catchup > _FREE_CATCHUP:
                # Reading the context costs now; drafting pays back over the rest of the
                # request. A probe expects no gain, so it never pays for a catch-up.
                payback = record.gain_ms_per_token * (req.max_tokens - n_out)
                if catchup * drafter.prefill_token_ms > payback:
                    continue
            draft = drafter.propose(history, n_out, k)
            if draft.tokens:
                return drafter.name, draft
        return None

    def _record(self, name: str, proposed: int, accepted: int, draft_ms: float,
                step_ms: float, stats: RequestStats) -> None:
        self.records[name].record(proposed, accepted, draft_ms, step_ms)
        stats.draft_proposed[name] = stats.draft_proposed.get(name, 0) + proposed
        stats.draft_accepted[name] = stats.draft_accepted.get(name, 0) + accepted

    def _emit(self, out: list[int], req: GenerateRequest) -> tuple[str, bool]:
        """The text so far (cut by the stop rule) and whether to stop; tells ``on_text``."""
        text = self._text(out, req)
        cut = req.stop(text) if req.stop is not None else None
        if cut is not None:
            text = text[:cut]
        if req.on_text is not None:
            req.on_text(text)
        return text, cut is not None


def _count_near_ties(rows: list[np.ndarray]) -> int:
    ties = 0
    for row in rows:
        top2 = np.partition(row, -2)[-2:]
        if abs(float(top2[1] - top2[0])) < _NEAR_TIE:
            ties += 1
    return ties
