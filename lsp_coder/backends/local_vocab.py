"""A vocabulary-only load of a local GGUF (no weights): exact token counts and FIM token texts,
found the way llama.cpp finds them (metadata, else the known token texts)."""

from __future__ import annotations

import functools
from pathlib import Path

import llama_cpp


class LocalVocab:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        self._vocab = llama_cpp.llama_model_get_vocab(self._llama.model)

    def count(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def token_text(self, which: str) -> str:
        """The text of the FIM token ``which`` (pre, suf, mid, sep, rep); "" when there is none."""
        token = getattr(llama_cpp, f"llama_vocab_fim_{which}")(self._vocab)
        if token < 0:
            return ""
        return llama_cpp.llama_vocab_get_text(self._vocab, token).decode("utf-8")


@functools.lru_cache(maxsize=4)
def local_vocab(path: str) -> LocalVocab:
    """The vocabulary of the GGUF at ``path``, loaded once per process."""
    return LocalVocab(Path(path).expanduser())
