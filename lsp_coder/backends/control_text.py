"""Control-token text inside user content (documents, other files, paths): found, and kept from
becoming a control token on a serving engine.

Serving engines parse control-token text in a string prompt into the control tokens themselves
(llama-server, vLLM, SGLang, Ollama, llama-cpp-python's server): a comment holding
``<|file_sep|>`` or ``<|endoftext|>`` would steer the model. The in-process engine tokenizes
text as text; for a serving engine the prompt goes as token ids where the engine takes them
(``engine_tokens``), the text cut at each control text first where the engine's tokenizer
would parse it (``segments``: each piece is tokenized alone, so the model reads the same
characters), and as a string with each control text broken by an invisible character where
only a string can go (``neutralize``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

BREAK = "\u200b"
"""Put inside control-token text sent as a string (ZERO WIDTH SPACE: no control token holds
it, it shows nothing, and before the last character it changes 2 tokens of Qwen's 17 for a
line holding two control texts, as few as a space there and fewer than after the first
character)."""

SHAPES = (r"<\|[^|<>\s]{1,64}\|>", "<\uff5c[^\uff5c<>\\n]{1,64}\uff5c>")
"""Control-token shapes whatever the model: ``<|...|>`` (Qwen, StarCoder's end of text, Phi,
Llama 3) and DeepSeek's ``<｜...｜>``."""

FAMILY_CONTROLS: dict[str, tuple[str, ...]] = {
    "qwen": tuple(f"<|{name}|>" for name in (
        "endoftext", "im_start", "im_end", "object_ref_start", "object_ref_end", "box_start",
        "box_end", "quad_start", "quad_end", "vision_start", "vision_end", "vision_pad",
        "image_pad", "video_pad", "fim_prefix", "fim_middle", "fim_suffix", "fim_pad",
        "repo_name", "file_sep")),
    "starcoder": ("<|endoftext|>", *(f"<{name}>" for name in (
        "fim_prefix", "fim_middle", "fim_suffix", "fim_pad", "repo_name", "reponame",
        "file_sep", "filename", "gh_stars", "issue_start", "issue_comment", "issue_closed",
        "jupyter_start", "jupyter_text", "jupyter_code", "jupyter_output", "jupyter_script",
        "empty_output", "code_to_intermediate", "intermediate_to_code", "commit_before",
        "commit_msg", "commit_after", "pr", "pr_status", "pr_is_merged", "pr_base", "pr_file",
        "pr_base_code", "pr_diff", "pr_diff_hunk", "pr_comment", "pr_event_id", "pr_review",
        "pr_review_state", "pr_review_comment", "pr_in_reply_to_review_id",
        "pr_in_reply_to_comment_id", "pr_diff_hunk_comment_line", "NAME", "EMAIL", "KEY",
        "PASSWORD"))),
    "codellama": ("<s>", "</s>", "<PRE>", "<SUF>", "<MID>", "<EOT>", "\u2581<PRE>",
                  "\u2581<SUF>", "\u2581<MID>", "\u2581<EOT>"),
    "deepseek": ("<\uff5cbegin\u2581of\u2581sentence\uff5c>",
                 "<\uff5cend\u2581of\u2581sentence\uff5c>", "<\uff5cfim\u2581begin\uff5c>",
                 "<\uff5cfim\u2581hole\uff5c>", "<\uff5cfim\u2581end\uff5c>", "<|EOT|>"),
}
"""The control tokens of each FIM family's models, as text (Qwen2.5-Coder's are read from its
GGUF; a local GGUF of the engine's model gives the exact list: ``model.path``)."""


class ControlText:
    """Finds control-token text: the ``texts`` given and the ``SHAPES``."""

    def __init__(self, texts: Iterable[str]) -> None:
        literal = sorted({t for t in texts if len(t) > 1 and BREAK not in t},
                         key=lambda t: (-len(t), t))
        self.texts = tuple(literal)
        """The control texts looked for besides the shapes, longest first."""
        self._find = re.compile("|".join([*map(re.escape, literal), *SHAPES]))

    def holds(self, text: str) -> bool:
        """Whether ``text`` holds control-token text."""
        return self._find.search(text) is not None

    def segments(self, text: str) -> list[str]:
        """``text`` cut just after the first character of each control text: no piece holds
        one (the earliest one found starts at a piece's last character), and the pieces
        joined are ``text``."""
        out: list[str] = []
        rest = text
        while rest:
            found = self._find.search(rest)
            if found is None:
                out.append(rest)
                break
            cut = found.start() + 1
            out.append(rest[:cut])
            rest = rest[cut:]
        return out

    def neutralize(self, text: str) -> str:
        """``text`` with ``BREAK`` before the last character of each control text, until none
        is left (a character put in never joins two that were apart, so none is made)."""
        while True:
            broken = self._find.sub(lambda m: m.group()[:-1] + BREAK + m.group()[-1], text)
            if broken == text:
                return text
            text = broken


def controls_for(family: str, markers: Iterable[str] = (),
                 vocabulary: Iterable[str] = ()) -> ControlText:
    """The control texts of a FIM ``family`` (a name of ``FAMILY_CONTROLS``, or any other
    string for none), the template's ``markers`` and a local vocabulary's control texts."""
    return ControlText([*FAMILY_CONTROLS.get(family, ()), *markers, *vocabulary])
