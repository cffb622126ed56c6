"""Token ids for a serving engine, made the way the in-process engine makes them: text
tokenized as text (no control token formed from it), the template's control tokens put in by
id.

Where the tokens come from (``Tokenizer``): a vocabulary-only load of a local GGUF of the
engine's model (``model.path``: exact, no request), llama-server's ``/tokenize`` with
``parse_special: false`` (exact), or vLLM's and SGLang's ``/tokenize``, which parses
control-token text: the text is cut at each control text first (``ControlText.segments``)
and each piece tokenized alone, so none is formed and the model reads the same characters.
Tokens are remembered per text, so the lines above the cursor, which stay the same while the
user types on one line, cost one request.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from cachetools import LRUCache

from .control_text import ControlText
from .fim_text import FimText

TEXTS_KEPT = 256
"""Texts whose tokens are remembered (as 4-byte ids: about 1 MB for 256 windows of 1,000
tokens)."""

LEAD_MARK = "\n"
"""Tokenized before a text to find the SentencePiece "dummy prefix" (a space some vocabularies
put before any text tokenized on its own): pieces tokenized apart must join without it, as
the in-process engine's do."""


class Tokenizer(Protocol):
    """An engine's tokenizer (raises ``transport.TransportError`` when it is remote)."""

    parses_control: bool
    """Whether ``text`` turns control-token text into control tokens (then text is cut at
    each control text before it is tokenized)."""

    def text(self, text: str) -> list[int]:
        """Token ids of ``text`` (see ``parses_control``)."""
        ...

    def control(self, text: str) -> list[int]:
        """Token ids of ``text`` with its control-token text parsed (a template's marker)."""
        ...

    def begin(self) -> list[int]:
        """What the model puts before every prompt (its BOS, when it adds one)."""
        ...


class TemplateIdsMissing(ValueError):
    """The engine's vocabulary has no single token for one of the template's markers."""


@dataclass(frozen=True, slots=True)
class FimIds:
    """The template's control tokens as ids (-1: the template has none)."""

    prefix: int
    """Begins the text before the cursor."""
    suffix: int
    """Begins the text after the cursor."""
    middle: int
    """After it the model writes the middle."""
    file_sep: int = -1
    """Begins each other file; -1: path comments instead."""
    repo_name: int = -1
    """Begins the repository line; -1: none."""
    begin: tuple[int, ...] = ()
    """Put before every prompt (BOS)."""
    lead: tuple[int, ...] = ()
    """The vocabulary's lead for a text read on its own, put after ``prefix`` as the
    in-process engine does (CodeLlama's ``<PRE> {prefix}``); () for byte-level BPE."""


class EngineTokens:
    """Token ids of text read as text, remembered per text, and the template's ids.

    Args:
        tokenizer: where tokens come from.
        controls: what is control-token text for the model (cut at, when the tokenizer
            parses it).
    """

    def __init__(self, tokenizer: Tokenizer, controls: ControlText) -> None:
        self.tokenizer = tokenizer
        self.controls = controls
        self._known: LRUCache[bytes, Sequence[int]] = LRUCache(TEXTS_KEPT)
        self._lead_mark: list[int] | None = None

    def forget(self) -> None:
        """Drop what is remembered (the engine may now serve another model)."""
        self._known.clear()
        self._lead_mark = None

    def text(self, text: str) -> Sequence[int]:
        """The ids of ``text`` as text: no control token, no lead (pieces join as one)."""
        if not text:
            return []
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        known = self._known.get(key)
        if known is not None:
            return known
        if self.tokenizer.parses_control:
            pieces = self.controls.segments(text)
        else:
            pieces = [text]
        tokens = array("i", [t for piece in pieces for t in self._unled(piece)])
        self._known[key] = tokens
        return tokens

    def count(self, text: str) -> int:
        """How many tokens ``text`` is, read as text."""
        return len(self.text(text))

    def _unled(self, text: str) -> list[int]:
        """Tokens of ``text`` without the vocabulary's lead (``LEAD_MARK``)."""
        mark = self._mark()
        if len(mark) < 2:
            return self.tokenizer.text(text)
        marked = self.tokenizer.text(LEAD_MARK + text)
        if marked[: len(mark)] == mark:
            return marked[len(mark) :]
        return self.tokenizer.text(text)  # the text merged into the mark: keep the lead

    def _mark(self) -> list[int]:
        if self._lead_mark is None:
            self._lead_mark = self.tokenizer.text(LEAD_MARK)
        return self._lead_mark

    def template(self, template: FimText) -> FimIds:
        """The ids of ``template``'s markers; raises TemplateIdsMissing (or TransportError)."""
        mark = self._mark()
        lead = tuple(mark[:-1]) if len(mark) > 1 else ()
        return FimIds(self._marker(template.prefix), self._marker(template.suffix),
                      self._marker(template.middle), self._marker(template.file_sep),
                      self._marker(template.repo_name), tuple(self.tokenizer.begin()), lead)

    def _marker(self, text: str) -> int:
        """The one control token ``text`` is (-1 for no marker)."""
        if not text.strip():
            return -1
        core = text.strip()
        for candidate in (core, "\u2581" + core, text):  # SentencePiece's "▁<SUF>" form
            ids = self.tokenizer.control(candidate)
            if len(ids) == 1:
                return ids[0]
        raise TemplateIdsMissing(f"the engine's model has no token {core!r}: is"
                                 " [backend] fim_template its family?")


class VocabTokenizer:
    """A local GGUF's vocabulary (``model.path``), read without weights."""

    parses_control = False

    def __init__(self, model_path: str) -> None:
        from .local_vocab import local_vocab

        self._vocab = local_vocab(model_path)

    def text(self, text: str) -> list[int]:
        return self._vocab.tokenize(text)

    def control(self, text: str) -> list[int]:
        return self._vocab.tokenize(text, special=True)

    def begin(self) -> list[int]:
        return self._vocab.begin()


class HttpTokenizer:
    """An engine's ``/tokenize`` route.

    Args:
        post: posts a JSON body to the route and returns the decoded answer.
        body: the request body for a text and whether control text is parsed.
        ids: the token ids in an answer.
        parses_control: whether the route parses control text even when asked not to.
    """

    def __init__(self, post: Callable[[dict], object], body: Callable[[str, bool, bool], dict],
                 ids: Callable[[object], list[int]], parses_control: bool) -> None:
        self._post, self._body, self._ids = post, body, ids
        self.parses_control = parses_control

    def text(self, text: str) -> list[int]:
        return self._ids(self._post(self._body(text, False, False)))

    def control(self, text: str) -> list[int]:
        return self._ids(self._post(self._body(text, True, False)))

    def begin(self) -> list[int]:
        return self._ids(self._post(self._body("", False, True)))
