"""FIM templates as text, for engines that take a plain prompt (OpenAI-compatible, Ollama).

vLLM rejects ``suffix`` and llama-cpp-python's server has its FIM token ids unset, so the
prompt carries the model's own FIM tokens, written out as their text; the engine's tokenizer
parses them back into the special tokens. The layout is the local engine's (PSM with the
cursor line's code after the middle token), so while the user types on one line the prompt
only grows at its end and the engine's prefix cache hits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import FimStrings
from ..shared_types import PromptParts


@dataclass(frozen=True, slots=True)
class FimText:
    prefix: str
    suffix: str
    middle: str
    file_sep: str = ""
    repo_name: str = ""


FAMILIES: dict[str, FimText] = {
    "qwen": FimText("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|file_sep|>",
                    "<|repo_name|>"),
    "starcoder": FimText("<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>",
                         "<repo_name>"),
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
        return FimText(setting.prefix, setting.suffix, setting.middle, setting.file_sep,
                       setting.repo_name)
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
                    vocab.token_text("sep"), vocab.token_text("rep"))
    if not (found.prefix and found.suffix and found.middle):
        raise TemplateError(f"{path} has no fill-in-the-middle tokens: set [backend]"
                            " fim_template to the engine model's family")
    return found


COMMENT_PREFIX = {".py": "#", ".pyi": "#", ".sh": "#", ".bash": "#", ".rb": "#", ".lua": "--",
                  ".toml": "#", ".yaml": "#", ".yml": "#"}
"""The line comment a path header is written in, by file suffix ("//" otherwise)."""


def path_header(path: str) -> str:
    """A comment line naming ``path``, for models without a file separator token."""
    return f"{COMMENT_PREFIX.get(Path(path).suffix, '//')} {path}\n"


def file_entry(path: str, body: str) -> str:
    """One other file as text after its separator: its path line, then its code ending in a
    newline."""
    return f"{path}\n{_ended(body)}"


def _ended(body: str) -> str:
    return body if body.endswith("\n") or not body else body + "\n"


def repository(template: FimText, extra: tuple[tuple[str, str], ...], repo: str,
               path: str) -> str:
    """Other files before the open one, in the model's repository format: Qwen2.5-Coder's
    ``<|repo_name|>name``, ``<|file_sep|>path`` + code per file, then ``<|file_sep|>path`` of
    the open file (StarCoder's ``<repo_name>``/``<file_sep>`` alike); a path comment per file
    for models without a separator. Empty without other files (the single-file prompt)."""
    if not extra:
        return ""
    if not template.file_sep:
        head = "".join(path_header(p) + _ended(body) for p, body in extra)
        return head + (path_header(path) if path else "")
    head = f"{template.repo_name}{repo}\n" if template.repo_name and repo else ""
    head += "".join(template.file_sep + file_entry(p, body) for p, body in extra)
    return head + (f"{template.file_sep}{path}\n" if path else "")


def build(template: FimText, parts: PromptParts) -> str:
    """The prompt text: other files (``repository``), then PSM with the recent lines and the
    typed line's code after the middle (its indentation before the suffix,
    ``PromptParts.cursor_line``)."""
    head = repository(template, parts.extra, parts.repo, parts.path)
    indent, typed = parts.cursor_line()
    return (f"{head}{template.prefix}{parts.imports}{parts.above}{indent}{template.suffix}"
            f"{parts.suffix}{template.middle}{parts.recent}{typed}")
