"""What idle work asks of the service (worker thread unless said): what to prepare after an
answer, a file opened or a cursor at rest, and preparing it (prefill, prefetch)."""

from __future__ import annotations

from collections.abc import Callable

from ..config import Config
from ..prompt_parts import PromptPart
from ..shared_types import PrefillResult
from .context import one_line_end
from .lifecycle import BackendLifecycle
from .next_prompts import NextPrompt, after_answer, document_window
from .records import CompletionRequest, Suggestion


class IdleWork:
    """``CompletionService``'s idle work (a part of it, not used alone)."""

    config: Config
    lifecycle: BackendLifecycle
    _cold: set[str]
    """Documents answered from the short prompt for a cold cache (the service's)."""
    # The service's too: backend, _refused, _query and complete.

    @property
    def prefills(self) -> bool:
        """Whether idle prefill runs: on the local engine, and on a serving engine that can
        take a prefill-only request when ``idle.remote`` allows it."""
        backend = self.backend
        if backend is None or not backend.can_prefill:
            return False
        return backend.kind == "local" or self.config.idle.remote

    def next_prompts(self, req: CompletionRequest, shown: str) -> list[NextPrompt]:
        """What to prepare after ``shown`` was answered for ``req`` (any thread)."""
        return after_answer(req.uri, req.path or req.uri, req.text, req.offset, shown,
                            cold=req.uri in self._cold)

    def opened(self, uri: str, path: str, text: str) -> NextPrompt:
        """What to prepare for a file just opened (any thread)."""
        return document_window(uri, path, one_line_end(text),
                               self.config.completion.prefix_tokens)

    def cursor_at(self, uri: str, path: str, text: str, offset: int) -> NextPrompt:
        """What to prepare for a cursor the client reported without asking to complete."""
        return NextPrompt("cursor", uri, path, text, offset)

    def full_at(self, nxt: NextPrompt) -> NextPrompt:
        """The full prompt at the state of ``nxt`` (whose prompt was the short one)."""
        return NextPrompt("full", nxt.uri, nxt.path, nxt.base, nxt.offset)

    def prefill(self, nxt: NextPrompt, state: tuple[str, int], cancelled: Callable[[], bool],
                stop: Callable[[], bool] = lambda: False,
                in_view: bool = False) -> PrefillResult | None:
        """Make the backend hold the prompt of ``nxt`` (worker thread; idle priority).

        ``state`` is ``nxt.state()`` (a copy of the document: the caller builds it once). A
        ``window`` holds only the prompt's part before the text below the cursor, a ``full``
        the full prompt; a cursor what ``idle.cursor_prompt`` says (the full prompt, the
        short one with its front first, or the prompt a request there would read now: the
        short one for a cold cache, see ``idle.cold_prompt_ms``), an Enter or accept branch
        the one it will read once this prefill is done (``PromptPart``'s ``branch``).
        ``in_view``: the document the user is in now (see ``Backend.prefill``). Stops within
        one ubatch once ``cancelled`` is true, after the running chunk once ``stop`` is.
        None when there is no model or the backend cannot prefill.
        """
        backend = self.backend
        if backend is None or self._refused(nxt.uri, record=False):
            return None
        self.lifecycle.use(self.config)
        text, offset = state
        req = CompletionRequest(uri=nxt.uri, text=text, offset=offset, path=nxt.path)
        query = self._query(req, preview=True, cancelled=cancelled, stop_between_chunks=stop)
        parts: dict[str, PromptPart] = {"window": "shared", "full": "full", "enter": "branch",
                                        "accept": "branch",
                                        "cursor": self.config.idle.cursor_prompt}
        part = parts.get(nxt.kind, "request")
        return backend.prefill(query, part, in_view)

    def prefetch(self, nxt: NextPrompt, state: tuple[str, int], cancelled: Callable[[], bool],
                 answer_early: Callable[[Suggestion], None] | None = None) -> Suggestion:
        """Generate the suggestion for ``nxt`` (at ``state``, its ``nxt.state()``) into the
        suggestion cache (idle priority).

        ``answer_early`` gets the complete lines so far once the inline budget has run out,
        for a request that is waiting on this very state.
        """
        text, offset = state
        req = CompletionRequest(uri=nxt.uri, text=text, offset=offset, path=nxt.path,
                                budget_ms=self.config.completion.inline_budget_ms or None)
        return self.complete(req, answer_early=answer_early, cancelled=cancelled, idle=True)

    def ubatches_done(self) -> int:
        """A clock of engine work: ubatches evaluated so far (any thread; 0 without a model)."""
        backend = self.backend
        return 0 if backend is None else backend.ubatches_done()
