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
        """Tokens of ``text`` read as text (control-token text is not parsed)."""
        return len(self.tokenize(text))

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        """Token ids of ``text``; ``special``: control-token text becomes its token."""
        return self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def begin(self) -> list[int]:
        """What the model puts before every prompt (its BOS, when it adds one)."""
        return self._llama.tokenize(b"", add_bos=True, special=False)

    def control_texts(self) -> tuple[str, ...]:
        """The text of every token llama.cpp forms only when told to parse control tokens
        (control and unknown tokens), as a serving engine does with a string prompt."""
        wanted = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
        out = []
        for token in range(llama_cpp.llama_vocab_n_tokens(self._vocab)):
            if llama_cpp.llama_vocab_get_attr(self._vocab, token) & wanted:
                text = llama_cpp.llama_vocab_get_text(self._vocab, token).decode("utf-8",
                                                                                  "replace")
                if text:
                    out.append(text)
        return tuple(out)

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
