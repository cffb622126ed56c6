"""FIM templates as text, for serving engines.

vLLM rejects ``suffix`` and llama-cpp-python's server has its FIM token ids unset, so the
prompt carries the model's own FIM tokens: as their ids where the engine takes ids
(``prompt_ids``), else written out as their text, which the engine's tokenizer parses back
into the special tokens (``build``; user content then has its control-token text broken,
``control_text``). The layout is the local engine's (PSM with the cursor line's code after
the middle token), so while the user types on one line the prompt only grows at its end and
the engine's prefix cache hits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import FimStrings
from ..prompt_parts import PromptParts
from .control_text import ControlText, controls_for


@dataclass(frozen=True, slots=True)
class FimText:
    """A model's FIM template as text, and what else is control-token text for it."""

    prefix: str
    """Begins the text before the cursor (PSM)."""
    suffix: str
    """Begins the text after the cursor."""
    middle: str
    """After it the model writes the middle."""
    file_sep: str = ""
    """Begins each other file (its path line, then its code); "": path comments instead."""
    repo_name: str = ""
    """Begins the repository line before the other files; "": none."""
    family: str = ""
    """The family name (``control_text.FAMILY_CONTROLS``), when it is one."""
    vocabulary: tuple[str, ...] = ()
    """Every control token's text, when read from the model's GGUF."""

    @property
    def markers(self) -> tuple[str, ...]:
        """The template's own token texts (stripped of the spaces around them)."""
        return tuple(m.strip() for m in (self.prefix, self.suffix, self.middle,
                                         self.file_sep, self.repo_name) if m.strip())

    def controls(self) -> ControlText:
        """What is control-token text for this model."""
        return controls_for(self.family, self.markers, self.vocabulary)


FAMILIES: dict[str, FimText] = {
    "qwen": FimText("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|file_sep|>",
                    "<|repo_name|>", family="qwen"),
    "starcoder": FimText("<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>",
                         "<repo_name>", family="starcoder"),
    "codellama": FimText("<PRE> ", " <SUF>", " <MID>", family="codellama"),
    "deepseek": FimText("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", family="deepseek"),
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
                    vocab.token_text("sep"), vocab.token_text("rep"),
                    vocabulary=vocab.control_texts())
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
               path: str, text: Callable[[str], str] = str) -> str:
    """Other files before the open one, in the model's repository format: Qwen2.5-Coder's
    ``<|repo_name|>name``, ``<|file_sep|>path`` + code per file, then ``<|file_sep|>path`` of
    the open file (StarCoder's ``<repo_name>``/``<file_sep>`` alike); a path comment per file
    for models without a separator. Empty without other files (the single-file prompt).
    ``text`` is applied to each piece of user content (``ControlText.neutralize``)."""
    if not extra:
        return ""
    if not template.file_sep:
        head = "".join(text(path_header(p) + _ended(body)) for p, body in extra)
        return head + (text(path_header(path)) if path else "")
    head = f"{template.repo_name}{text(repo)}\n" if template.repo_name and repo else ""
    head += "".join(template.file_sep + text(file_entry(p, body)) for p, body in extra)
    return head + (f"{template.file_sep}{text(path)}\n" if path else "")


def build(template: FimText, parts: PromptParts, text: Callable[[str], str] = str) -> str:
    """The prompt text: other files (``repository``), then PSM with the recent lines and the
    typed line's code after the middle (its indentation before the suffix,
    ``PromptParts.cursor_line``). ``text`` is applied to each piece of user content."""
    head = repository(template, parts.extra, parts.repo, parts.path, text)
    indent, typed = parts.cursor_line()
    return (f"{head}{template.prefix}{text(parts.imports)}{text(parts.above)}{indent}"
            f"{template.suffix}{text(parts.suffix)}{template.middle}{text(parts.recent)}"
            f"{text(typed)}")
