"""FIM templates as text, for engines that take a plain prompt (OpenAI-compatible, Ollama).

vLLM rejects ``suffix`` and llama-cpp-python's server has its FIM token ids unset, so the
prompt carries the model's own FIM tokens, written out as their text; the engine's tokenizer
parses them back into the special tokens. The layout is the local engine's (PSM with the
cursor line after the middle token), so while the user types on one line the prompt only grows
at its end and the engine's prefix cache hits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import FimStrings


@dataclass(frozen=True, slots=True)
class FimText:
    prefix: str
    suffix: str
    middle: str
    file_sep: str = ""


FAMILIES: dict[str, FimText] = {
    "qwen": FimText("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|file_sep|>"),
    "starcoder": FimText("<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>"),
    "codellama": FimText("<PRE> ", " <SUF>", " <MID>"),
    "deepseek": FimText("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
}


class TemplateError(ValueError):
    """The configured template cannot be used; the message says how to fix it."""


def resolve(setting: str | FimStrings, model_path: str = "") -> FimText:
    """``backend.fim_template``: a family name, explicit strings, or "auto" (read the GGUF).

    Raises TemplateError naming the fix.
    """
    if isinstance(setting, FimStrings):
        if not (setting.prefix and setting.suffix and setting.middle):
            raise TemplateError("[backend] fim_template needs prefix, suffix and middle strings")
        return FimText(setting.prefix, setting.suffix, setting.middle, setting.file_sep)
    name = setting.strip().lower()
    if name in FAMILIES:
        return FAMILIES[name]
    if name == "auto" and model_path:
        return from_gguf(Path(model_path).expanduser())
    if name == "auto":
        return FAMILIES["qwen"]
    raise TemplateError(f"[backend] fim_template = {setting!r}: use one of"
                        f" {', '.join(sorted(FAMILIES))}, \"auto\" or a table of strings")


def from_gguf(path: Path) -> FimText:
    """The FIM token texts of a local GGUF, from a vocabulary-only load (no weights)."""
    from .local_vocab import local_vocab

    try:
        vocab = local_vocab(str(path))
    except (OSError, ValueError) as exc:
        raise TemplateError(f"cannot read the FIM template from {path}: {exc}") from None
    found = FimText(vocab.token_text("pre"), vocab.token_text("suf"), vocab.token_text("mid"),
                    vocab.token_text("sep"))
    if not (found.prefix and found.suffix and found.middle):
        raise TemplateError(f"{path} has no fill-in-the-middle tokens: set [backend]"
                            " fim_template to the engine model's family")
    return found


def build(template: FimText, extra: tuple[tuple[str, str], ...], above: str, line_prefix: str,
          suffix: str, recent: str = "") -> str:
    """The prompt text: other files' chunks, then PSM with the recent lines and the typed line
    after the middle."""
    head = ""
    for path, body in extra:
        if template.file_sep:
            head += f"{template.file_sep}{path}\n{body}"
        else:
            head += f"{path}\n{body}\n"
    return (f"{head}{template.prefix}{above}{template.suffix}{suffix}{template.middle}"
            f"{recent}{line_prefix}")
