"""The decode loop: prefill from the prefix cache, then greedy or sampled decoding with drafts."""

from __future__ import annotations

import logging
import time
from typing import Sequence

import numpy as np

from ..shared_types import RequestStats, StopReason
from .costs import BatchCosts, DrafterRecord
from .decode_run import (
    DecodeRun,
    emit_text,
    first_line_tokens,
    member_rule,
    output_text,
    rule_allows,
    rule_line,
    ruled_draft,
)
from .generate_request import GenerateRequest, GenerateResult
from .greedy_memory import GreedyMemory
from .healing import choose, spelled
from .llama import Model
from .llama_context import Context, DecodeAborted
from .member_rule import constrained_pick
from .prefix_cache.manager import PrefixCache
from .sampling import count_near_ties, probability, verify
from .speculative import Draft, Drafter

log = logging.getLogger(__name__)

FREE_CATCHUP_TOKENS = 32
"""Context a drafter may read before drafting without weighing its cost (a few keystrokes)."""

DEFAULT_BATCH_MS = {1: 40.0, 2: 60.0, 4: 100.0, 8: 200.0, 16: 300.0}
"""Verification batch costs assumed when none were calibrated (tests)."""


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


class Generator:
    """Runs one request at a time on the target context (call from the worker thread only).

    One request: recall what the greedy memory knows, prefill the rest of the prompt, then
    emit the pending pick and take a plain step or a verification step (draft, evaluate
    ``[last, draft...]``, accept, remove the rejected tail) until a stop; remember greedy picks.
    """

    def __init__(self, model: Model, cache: PrefixCache, drafters: Sequence[Drafter] = (),
                 costs: BatchCosts | None = None, memory: GreedyMemory | None = None) -> None:
        self.model = model
        self.memory = memory
        self.use_memory = True
        """Whether remembered greedy picks may be taken (they are always remembered)."""
        self.cache = cache
        self.ctx: Context = cache.ctx
        self.drafters = list(drafters)
        self.records = {d.name: DrafterRecord(max_k=d.max_k, prior_accepted=d.prior[0],
                                              prior_rejected=d.prior[1],
                                              prior_draft_ms=d.token_ms)
                        for d in self.drafters}
        self.costs = costs or BatchCosts(DEFAULT_BATCH_MS)

    def generate(self, req: GenerateRequest) -> GenerateResult:
        """Complete ``req.prompt``; stops at EOG, ``max_tokens``, the stop rule or cancellation."""
        run = DecodeRun(req, RequestStats(prompt_tokens=len(req.prompt)),
                        np.random.default_rng(req.seed), req.heal.encode("utf-8"),
                        rule=member_rule(req))
        self.ctx.cancel_check = lambda: req.cancelled() or (run.read and req.yielding())
        try:
            if self._may_recall(req):
                reason = self._recall(run)
                if reason is not None:
                    run.stats.reused_tokens = len(req.prompt)  # nothing had to be evaluated
                    return self._finish(run, reason)
            reason = self._decode(run)
        finally:
            self.ctx.cancel_check = None
        self._remember(run, reason)
        return self._finish(run, reason)

    # -- phases ---------------------------------------------------------------------------------

    def _may_recall(self, req: GenerateRequest) -> bool:
        return (req.temperature <= 0 and req.speculative and self.use_memory
                and self.memory is not None)

    def _recall(self, run: DecodeRun) -> StopReason | None:
        """Take the remembered greedy continuation of the prompt into ``run.out``.

        Returns why the request ended within it, or None if it goes on. A remembered token is
        the target's unconstrained argmax, so it is also its pick under the healing constraint
        whenever the constraint allows it.
        """
        start = time.perf_counter()
        reason = self._take_remembered(run)
        run.stats.known_tokens = len(run.out)
        run.stats.decode_ms = _ms_since(start)
        return reason

    def _take_remembered(self, run: DecodeRun) -> StopReason | None:
        req = run.req
        tokens, probs = self.memory.recall(req.prompt) if self.memory else ([], [])
        for token, prob in zip(tokens, probs):
            if len(run.out) >= req.max_tokens:
                return StopReason.MAX_TOKENS
            if self.model.is_eog(token):
                return StopReason.EOG
            rest = spelled(self.model, token, run.heal) if run.heal else b""
            if rest is None:
                return None
            if not rule_allows(self.model, run, run.out, token):
                return None  # the rule picks otherwise here: decoding goes on from it
            run.heal = rest
            run.out.append(token)
            run.probs.append(prob)
            if emit_text(self.model, run):
                return StopReason.STOP_RULE
        if run.out and len(run.out) >= req.max_tokens:
            return StopReason.MAX_TOKENS
        return None

    def _decode(self, run: DecodeRun) -> StopReason:
        """Prefill, then one step after another until a stop."""
        start = time.perf_counter()
        decode_start: float | None = None
        try:
            self._prefill(run, start)
            decode_start = time.perf_counter()
            while True:
                reason = self._emit_next(run)
                if reason is not None:
                    return reason
                step_start = time.perf_counter()
                drafted = self._draft(run) if run.req.speculative and not run.heal else None
                if drafted is None:
                    self._plain_step(run, step_start)
                    continue
                reason = self._verify_step(run, *drafted, step_start)
                if reason is not None:
                    return reason
        except DecodeAborted:
            run.stats.prefill_ms = run.stats.prefill_ms or _ms_since(start)
            return StopReason.CANCELLED
        finally:
            if decode_start is not None:
                run.stats.decode_ms += _ms_since(decode_start)

    def _prefill(self, run: DecodeRun, start: float) -> None:
        """Evaluate what the prefix cache does not hold of the history; pick the first token."""
        history = run.history
        stats = run.stats
        stats.prompt_tokens = len(history)
        document = run.req.document
        prepared = (self.cache.prepare_branch(history, leave=1, document=document)
                    if run.req.idle else self.cache.prepare(history, document))
        if prepared is None:  # idle work found no spare sequence: it does not run
            raise DecodeAborted(0)
        stats.reused_tokens = prepared.reused
        stats.shifted_tokens = prepared.shifted
        stats.evaluated_tokens = len(history) - prepared.reused
        run.seq = prepared.seq_id
        self.cache.extend(run.seq, history[prepared.reused :], n_logits=1, idle=run.req.idle)
        stats.prefill_ms = _ms_since(start)
        run.read = True
        self._pick(run, self.ctx.logits(0))
        for drafter in self.drafters:
            drafter.begin(run.req.prompt, run.req.hint, run.req.corpus)

    def _emit_next(self, run: DecodeRun) -> StopReason | None:
        """Append the pending pick to the output, unless the request ends before it."""
        if run.req.cancelled() or run.req.yielding():
            return StopReason.CANCELLED
        if self.model.is_eog(run.next_token):
            return StopReason.EOG
        if len(run.out) >= run.req.max_tokens:
            return StopReason.MAX_TOKENS
        run.out.append(run.next_token)
        run.probs.append(run.next_prob)
        if run.constrained:
            run.constrained_until = len(run.out)
        if emit_text(self.model, run):
            return StopReason.STOP_RULE
        if len(run.out) >= run.req.max_tokens:
            return StopReason.MAX_TOKENS
        return None

    def _plain_step(self, run: DecodeRun, step_start: float) -> None:
        """Evaluate the last token alone and pick the next."""
        self.cache.extend(run.seq, run.out[-1:], n_logits=1, idle=run.req.idle)
        self.costs.observe(1, _ms_since(step_start))
        self._pick(run, self.ctx.logits(0))
        run.stats.decode_steps += 1

    def _verify_step(self, run: DecodeRun, name: str, draft: Draft,
                     step_start: float) -> StopReason | None:
        """One verification of a draft; returns STOP_RULE if the accepted text ends the request."""
        req = run.req
        # Evaluate [last, draft...]: row i predicts the token after draft[:i].
        verify_start = time.perf_counter()
        n_rows = self.cache.extend(run.seq, run.out[-1:] + draft.tokens,
                                   n_logits=len(draft.tokens) + 1, idle=run.req.idle)
        self.costs.observe(n_rows, _ms_since(verify_start))
        rows = [self.ctx.logits(i) for i in range(n_rows)]
        # Accept the agreeing prefix; the target's own token follows it.
        verdict = verify(rows, draft.tokens, req.temperature, run.rng)
        run.stats.near_ties += count_near_ties(rows[: verdict.accepted + 1])
        accepted = draft.tokens[: verdict.accepted]
        probs = [probability(rows[i], token) for i, token in enumerate(accepted)]
        accepted, ruled = ruled_draft(self.model, run, rows, accepted)
        probs = probs[: len(accepted)]
        # Remove the rejected tail from the KV.
        self.cache.truncate(run.seq, len(req.prompt) + len(run.out) + len(accepted))
        self._record(name, len(draft.tokens), len(accepted), draft.cost_ms,
                     _ms_since(step_start), run.stats)
        run.stats.decode_steps += 1
        if ruled is not None:
            run.next_token, run.next_prob = ruled
            run.constrained = True
        else:
            run.next_token, run.constrained = verdict.token, False
            run.next_prob = probability(rows[verdict.accepted], verdict.token)
        eog_at = next((i for i, t in enumerate(accepted) if self.model.is_eog(t)), None)
        if eog_at is not None:
            accepted, run.next_token = accepted[:eog_at], accepted[eog_at]
            probs, run.next_prob = probs[:eog_at], probs[eog_at]
        run.out.extend(accepted)
        run.probs.extend(probs)
        for drafter in self.drafters:
            drafter.accepted(run.history)
        if accepted and emit_text(self.model, run):
            return StopReason.STOP_RULE
        return None

    def _remember(self, run: DecodeRun, reason: StopReason) -> None:
        """Keep the greedy picks (and the end token, if one was picked freely)."""
        if run.req.temperature > 0 or self.memory is None:
            return
        ended = [run.next_token] if reason is StopReason.EOG and not run.constrained else []
        probs = [None] * len(run.req.prompt) + run.probs + [run.next_prob] * len(ended)
        self.memory.remember(run.history + ended, len(run.req.prompt) + run.constrained_until,
                             probs)

    def _finish(self, run: DecodeRun, reason: StopReason) -> GenerateResult:
        req, out, stats = run.req, run.out, run.stats
        stats.generated_tokens = len(out)
        log.debug("generate: prompt %d reused %d hint %d -> %d tokens (%d known, %s) in %.0f ms"
                  " prefill, %.0f ms decode, %d steps, drafts %s/%s", len(req.prompt),
                  stats.reused_tokens, len(req.hint), len(out), stats.known_tokens, reason.value,
                  stats.prefill_ms, stats.decode_ms, stats.decode_steps, stats.draft_accepted,
                  stats.draft_proposed)
        text = output_text(self.model, out, req)
        cut = req.stop(text) if req.stop is not None else None
        stats.token_probs = [None if p is None else round(p, 4) for p in run.probs]
        stats.first_line_tokens = first_line_tokens(self.model, out, req)
        return GenerateResult(text if cut is None else text[:cut], out, reason, stats)

    # -- helpers --------------------------------------------------------------------------------

    def _pick(self, run: DecodeRun, logits: np.ndarray) -> None:
        """Pick the next token under what is left of the healing text (``healing.choose``),
        then under the member rule (``member_rule``)."""
        heal = run.heal
        chosen = choose(self.model, logits, heal, run.req.temperature, run.rng)
        run.next_token, run.heal = chosen.token, chosen.rest
        run.constrained, run.next_prob = chosen.constrained, chosen.prob
        if run.rule is not None:
            among = self.model.healing_candidates(heal) if heal else None
            ruled = constrained_pick(self.model, logits, run.rule,
                                     rule_line(self.model, run, run.out), chosen.token, among)
            if ruled is not None:
                run.next_token, run.next_prob = ruled
                run.constrained = True
                if heal:
                    run.heal = spelled(self.model, run.next_token, heal) or b""

    def _draft(self, run: DecodeRun) -> tuple[str, Draft] | None:
        """The first drafter, cheapest first, whose draft is worth verifying now."""
        req, n_out, history = run.req, len(run.out), run.history
        limit = min(req.max_tokens - n_out, self.ctx.n_ubatch - 1)
        for drafter in self.drafters:
            record = self.records[drafter.name]
            k = record.choose_k(self.costs, limit)
            if k <= 0:
                continue
            catchup = drafter.catchup(history)
            if catchup > FREE_CATCHUP_TOKENS:
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
