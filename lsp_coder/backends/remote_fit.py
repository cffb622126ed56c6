"""A serving engine's one place to fit a prompt: the pieces to their token budgets by its
exact counts.

The sources gathered the pieces by an estimate of characters per token; this trims them (in
whole window steps, so the prompt stays stable between keystrokes) until the counted tokens fit.
Counts are remembered per text by the backend, so text that did not change since the last
keystroke costs no request.
"""

from __future__ import annotations

from collections.abc import Callable

from ..prompt_parts import (
    CHARS_PER_TOKEN,
    IMPORTS_SHARE,
    WINDOW_QUANTUM_LINES,
    PromptBudget,
    PromptParts,
)

Count = Callable[[str], int]


def fit_parts(parts: PromptParts, count: Count, budget: PromptBudget) -> PromptParts:
    """``parts`` with ``imports``, ``above``, ``suffix`` and ``extra`` held to ``budget``."""
    prefix_tokens, suffix_tokens, extra_tokens = budget.prefix, budget.suffix, budget.extra
    # The typed line changes at every key: estimated, so counting it costs no request.
    typed = len(parts.line_prefix) // CHARS_PER_TOKEN + 1
    recent = count(parts.recent) if parts.recent else 0
    imports = _trim_back(parts.imports, prefix_tokens // IMPORTS_SHARE, count, step=1)
    used_above = typed + recent + (count(imports) if imports else 0)
    above = _trim_front(parts.above, max(0, prefix_tokens - used_above), count)
    suffix = _trim_back(parts.suffix, suffix_tokens, count)
    extra: list[tuple[str, str]] = []
    # The repository line and the open file's path line come with the first other file.
    used = count(f"{parts.repo}\n{parts.path}\n") + 2 if parts.extra else 0
    for path, body in parts.extra:
        n = count(f"{path}\n{body}") + 1
        if used + n > extra_tokens:
            break
        extra.append((path, body))
        used += n
    return PromptParts(tuple(extra), above, parts.line_prefix, suffix, parts.recent,
                       parts.repo, parts.path, imports)


def _trim_front(text: str, budget: int, count: Count) -> str:
    while text and count(text) > budget:
        lines = text.splitlines(keepends=True)
        text = "".join(lines[min(len(lines), WINDOW_QUANTUM_LINES):])
    return text


def _trim_back(text: str, budget: int, count: Count, step: int = WINDOW_QUANTUM_LINES) -> str:
    while text and count(text) > budget:
        lines = text.splitlines(keepends=True)
        text = "".join(lines[: max(0, len(lines) - step)])
    return text
