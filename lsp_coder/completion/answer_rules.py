"""When a suggestion stops, the early answer once the caller's budget runs out, and an
answer too unsure to show."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..confidence import first_line_confidence
from ..shared_types import RequestStats, StopReason
from .postprocess import POST_CACHE, PRE_CACHE, FilterContext, run
from .postprocess.statement import statement_end
from .records import Suggestion


class EarlyAnswer:
    """Sends the complete lines so far once the budget has run out (at most once)."""

    def __init__(self, send: Callable[[Suggestion], None] | None, budget_ms: float | None,
                 start: float, ctx: FilterContext) -> None:
        self.send = send
        self.deadline = None if budget_ms is None else start + budget_ms / 1000
        self.start = start
        self.ctx = ctx
        self.sent = False

    def over_budget(self) -> bool:
        """Whether the caller's budget has run out (never without one)."""
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def on_text(self, text: str) -> None:
        if self.sent or self.send is None or self.deadline is None:
            return
        if not self.over_budget():
            return
        cut = text.rfind("\n")
        if cut <= 0 or not text[:cut].strip():
            return  # the first line is not complete yet
        complete = text[:cut]
        answer = run(POST_CACHE, run(PRE_CACHE, complete, self.ctx), self.ctx)
        if not answer:
            return
        self.sent = True
        self.send(Suggestion(answer, latency_ms=(time.perf_counter() - self.start) * 1000,
                             stop_reason=StopReason.TIME_BOX))


def one_statement(ctx: FilterContext, max_lines: int) -> Callable[[str], int | None]:
    """Single-line mode shows the answer to its line's end, or to the end of the line that
    closes a bracket it leaves open (``statement_end``; see ``limit_scope``): stop there.
    At the end of a finished line the model's answer is often a newline and the next line,
    which would be generated only to be dropped."""

    def stop(text: str) -> int | None:
        return statement_end(ctx, text, max_lines)

    return stop


def line_limit(max_lines: int) -> Callable[[str], int | None]:
    """Stop after ``max_lines`` lines with content (a leading newline does not count)."""

    def stop(text: str) -> int | None:
        lines = 0
        pos = 0
        body_started = False
        while True:
            nl = text.find("\n", pos)
            if nl < 0:
                return None
            if text[pos:nl].strip() or body_started:
                body_started = True
                lines += 1
                if lines >= max_lines:
                    return nl
            pos = nl + 1

    return stop


def unsure(stats: RequestStats | None, min_confidence: float) -> bool:
    """Whether the model's confidence in the answer's first line (``first_line_confidence``)
    is below ``min_confidence`` (``completion.min_confidence``; never when the probabilities
    are not known, as from a serving engine)."""
    if min_confidence <= 0 or stats is None:
        return False
    confidence = first_line_confidence(stats.token_probs, stats.first_line_tokens)
    return confidence is not None and confidence < min_confidence
