"""One request on its way through the decode loop (``generator.Generator``), and the text its
tokens make: the healing text cut from its front, the stop rule's cut applied."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from ..shared_types import RequestStats
from .generate_request import GenerateRequest
from .llama import Model
from .member_rule import MemberRule, constrained_pick


@dataclass(slots=True)
class DecodeRun:
    """One request on its way through the decode loop."""

    req: GenerateRequest
    """The request."""
    stats: RequestStats
    """Filled in as it goes."""
    rng: np.random.Generator
    """The sampler's generator (seeded by ``req.seed``)."""
    heal: bytes
    """The healing text the next picks must still spell."""
    out: list[int] = field(default_factory=list)
    """The tokens emitted so far."""
    probs: list[float | None] = field(default_factory=list)
    """The model's probability of each token of ``out`` when picked (None: not known)."""
    next_token: int = -1
    """The target's pick after ``out``, not emitted yet."""
    next_prob: float | None = None
    """The model's probability of ``next_token``."""
    constrained: bool = False
    """Whether ``next_token`` was picked under the healing constraint."""
    constrained_until: int = 0
    """The tokens of ``out`` before this were picked under the healing constraint."""
    seq: int = -1
    """The target sequence that holds ``prompt + out`` (less the last token of ``out``)."""
    read: bool = False
    """The prompt is read: ``req.yielding`` now stops a decode step as ``req.cancelled``
    does."""
    rule: MemberRule | None = None
    """Keeps greedy picks after a known qualifier to its members (``member_rule``)."""

    @property
    def history(self) -> list[int]:
        return self.req.prompt + self.out


def member_rule(req: GenerateRequest) -> MemberRule | None:
    """The request's rule for names after known qualifiers (greedy requests that have one)."""
    if not req.members or req.temperature > 0:
        return None
    before = req.line_before
    if req.heal and "\n" in req.heal:
        before = ""  # the cursor line starts inside the healing text
    elif req.heal and before.endswith(req.heal):
        before = before[: len(before) - len(req.heal)]
    return MemberRule(req.members, before)


def output_text(model: Model, out: list[int], req: GenerateRequest) -> str:
    text = model.detokenize(out)
    return text[len(req.heal) :] if req.heal and text.startswith(req.heal) else text


def first_line_tokens(model: Model, out: list[int], req: GenerateRequest) -> int:
    """The tokens of ``out`` up to the one that starts its text's second line (all of
    them for one line), found by bisection: a longer prefix's text holds a shorter one's
    line breaks (the healing text cut from its front comes from the cursor's line, so it
    holds none)."""
    second_line = bisect.bisect_left(
        range(1, len(out) + 1), True,
        key=lambda n: "\n" in output_text(model, out[:n], req).lstrip())
    return min(second_line + 1, len(out))


def emit_text(model: Model, run: DecodeRun) -> bool:
    """Tell ``on_text`` the text so far (cut by the stop rule); whether the rule cut it."""
    req = run.req
    text = output_text(model, run.out, req)
    cut = req.stop(text) if req.stop is not None else None
    if cut is not None:
        text = text[:cut]
    if req.on_text is not None:
        req.on_text(text)
    return cut is not None


def rule_line(model: Model, run: DecodeRun, out: list[int]) -> str:
    """The cursor line's text with ``out`` generated (the healing text spelled in it)."""
    assert run.rule is not None
    return run.rule.line(model.detokenize(out))


def rule_allows(model: Model, run: DecodeRun, out: list[int], token: int) -> bool:
    """Whether the member rule (if any) lets ``token`` follow ``out``."""
    if run.rule is None:
        return True
    piece = model.piece(token).decode("utf-8", "replace")
    return run.rule.allows(rule_line(model, run, out), piece)


def ruled_draft(model: Model, run: DecodeRun, rows: list[np.ndarray], accepted: list[int]
                ) -> tuple[list[int], tuple[int, float] | None]:
    """The accepted draft tokens up to the first the member rule refuses, and the rule's
    pick (token, probability) from that row in its place, or from the row after them all
    where the rule picks otherwise than the target (None: the target's own token stands)."""
    if run.rule is None:
        return accepted, None
    for i, token in enumerate(accepted):
        if not rule_allows(model, run, run.out + accepted[:i], token):
            ruled = constrained_pick(model, rows[i], run.rule,
                                     rule_line(model, run, run.out + accepted[:i]))
            if ruled is not None:
                return accepted[:i], ruled
            return accepted, None  # no candidate keeps to it: the rule steps aside
    return accepted, constrained_pick(model, rows[len(accepted)], run.rule,
                                      rule_line(model, run, run.out + accepted))
