"""The FIM prompt keeps its start while the user types on a line (so the KV cache keeps it)."""

from __future__ import annotations

from lsp_coder.completion.context import PromptParts
from lsp_coder.completion.fim import FimTemplate, build_prompt


def _tokenize(text: str) -> list[int]:
    return [ord(c) for c in text]  # one token per character: 3x over the char estimate


def test_typing_on_a_line_keeps_a_long_prompts_start():
    """A window above larger than the token budget drops whole lines, never a token per key."""
    above = "".join(f"value_{i} = compute({i})\n" for i in range(200))
    prompts = []
    for typed in ("    ", "    r", "    re", "    ret", "    retu"):
        parts = PromptParts((), above, typed, "\n")
        prompts.append(build_prompt(FimTemplate(1, 2, 3), parts, _tokenize,
                                    lambda t: "".join(map(chr, t)), prefix_tokens=1000,
                                    suffix_tokens=100, extra_tokens=0).tokens)
    first = prompts[0][: prompts[0].index(2)]
    assert len(first) <= 1000
    for prompt in prompts[1:]:
        assert prompt[: len(first)] == first
