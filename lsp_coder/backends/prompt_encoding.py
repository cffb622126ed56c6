"""How the prompt goes to one serving engine: token ids where it takes them, else a string.

Token ids (``prompt_ids``) where the engine takes a list of ids as ``prompt`` (llama-server's
``/completion``, vLLM's and SGLang's ``/v1/completions``) and its tokenizer can be reached
(``engine_tokens``): control tokens appear only where lsp-coder puts them, as in-process. A
string (``fim_text.build``) where the engine takes only a string (Ollama, llama-cpp-python's
server, which refuses ids: found at the first request and remembered), where no tokenizer is
reachable, or with ``[backend] prompt = "text"``: control-token text in user content is broken
there (``ControlText.neutralize``), so the engine's tokenizer cannot form it.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ..prompt_parts import PromptParts
from . import fim_text, prompt_ids
from .engine_tokens import EngineTokens, FimIds, TemplateIdsMissing
from .fim_text import FimText
from .transport import TransportError

log = logging.getLogger(__name__)

NO_ROUTE = (404, 405, 501)
"""HTTP statuses of an engine without the tokenize route."""

REFUSED = (400, 422, 500)
"""HTTP statuses of an engine that refuses a list of ids as ``prompt`` (a validation error:
422 from FastAPI, 500 from llama-cpp-python's server)."""


class PromptEncoding:
    """Builds one serving engine's prompts (worker thread).

    Args:
        template: the model's FIM template as text.
        tokens: the engine's tokenizer; None when none can be reached.
        takes_ids: whether the engine's completion route may take ids.
        setting: ``[backend] prompt``: "auto" (ids where possible) or "text".
    """

    def __init__(self, template: FimText, tokens: EngineTokens | None, takes_ids: bool,
                 setting: str) -> None:
        self.template = template
        self.controls = template.controls()
        self.tokens = tokens if takes_ids and setting == "auto" else None
        self.mode = "text" if self.tokens is None else "undecided"
        """"tokens", "text", or "undecided" until the engine's tokenizer first answers."""
        self.why = "" if self.tokens is not None else (
            "[backend] prompt = \"text\"" if setting == "text" else
            "the engine takes a string only" if not takes_ids else "no tokenizer reachable")
        """Why the prompt goes as a string ("" while it goes as ids)."""
        self.confirmed = False
        """Whether the engine answered a prompt of ids (then a refusal is not about ids)."""
        self._ids: FimIds | None = None

    def prompt(self, parts: PromptParts, *, shared: bool = False,
               as_text: bool = False) -> str | list[int]:
        """The prompt for ``parts`` (raises TransportError when the engine's tokenizer cannot
        be reached). ``shared``: only what every cursor in the window shares (up to the
        suffix marker). ``as_text``: a string whatever the mode."""
        ids = self._template_ids() if self.mode != "text" and not as_text else None
        if ids is not None:
            return prompt_ids.build(ids, parts, self.tokens.text, shared=shared)
        if not shared:
            return fim_text.build(self.template, parts, self.controls.neutralize)
        markers = self.template.suffix + self.template.middle
        cut = replace(parts, line_prefix="", suffix="", recent="")
        return fim_text.build(self.template, cut, self.controls.neutralize)[: -len(markers)]

    def _template_ids(self) -> FimIds | None:
        if self._ids is None:
            try:
                self._ids = self.tokens.template(self.template)
            except TemplateIdsMissing as exc:
                self.use_text(str(exc))
                return None
            except TransportError as exc:
                if exc.status not in NO_ROUTE and exc.kind != "protocol":
                    raise  # down or refusing: the request fails as any other would
                self.use_text(f"the engine's tokenize route answered {exc.detail[:80]}")
                return None
            self.mode = "tokens"
        return self._ids

    def may_refuse(self, error: TransportError) -> bool:
        """Whether ``error``, the answer to a prompt of ids before the engine ever took one,
        may be the engine refusing ids (llama-cpp-python's server answers 500 with a
        validation error): the request is then sent again as a string, and if that one is
        taken, strings go from then on (``use_text``)."""
        return self.mode == "tokens" and not self.confirmed and error.status in REFUSED

    def forget(self) -> None:
        """The engine failed: find its template's ids and its tokens again at the next
        request (it may come back serving another model)."""
        if self.mode == "tokens":
            self.mode, self.confirmed, self._ids = "undecided", False, None
        if self.tokens is not None:
            self.tokens.forget()

    def use_text(self, why: str) -> None:
        """Send strings from now on, for ``why``."""
        log.info("completion prompts go as text, control-token text broken: %s", why)
        self.mode, self.why, self._ids = "text", why, None

    def describe(self) -> dict:
        """How prompts go, for ``doctor`` and ``lspCoder.stats``."""
        return {"as": self.mode, "why_text": self.why or None}
