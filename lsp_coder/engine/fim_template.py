"""The fill-in-the-middle template a model reads: its special token ids."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FimTemplate:
    """Token ids of a model's FIM template, read from its GGUF vocabulary.

    The engine reads it once at load; the completion layer builds prompts with it. A negative
    id means the model has no such token: without ``prefix``, ``suffix`` and ``middle`` the
    model completes from the text before the cursor only.
    """

    prefix: int = -1
    suffix: int = -1
    middle: int = -1
    file_sep: int = -1
    """Separates the extra files put before the prompt (-1: they are joined as plain text)."""
    bos: int = -1
    """Begins every prompt (-1: the model adds none)."""
    repo_name: int = -1
    """Begins the repository line before the extra files (-1: none is written)."""
    prefix_lead: tuple[int, ...] = ()
    """Goes between ``prefix`` and the text before the cursor: the vocabulary's lead for a
    text read on its own (CodeLlama's format is ``<PRE> {prefix} <SUF>{suffix} <MID>``)."""

    @property
    def has_fim(self) -> bool:
        return min(self.prefix, self.suffix, self.middle) >= 0
