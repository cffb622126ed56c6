"""What the model's confidence in its first line tells (``bench crossfile``): hiding the
answers it is least sure of, and asking with the other files' section only where the file
alone leaves it unsure (Repoformer's selective retrieval, gated by the answer's own token
probabilities instead of a trained token)."""

from __future__ import annotations

from ..confidence import first_line_confidence
from .crossfile_report import Answer, in_file_run

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The confidences the tables are printed at."""


def confidence(answer: Answer) -> float | None:
    """The model's confidence in the first line (``first_line_confidence``; None: not known,
    an engine that does not say)."""
    return first_line_confidence(answer.token_probs, answer.first_line_tokens)


def hiding_table(answers: dict[str, list[Answer]]) -> str:
    """Per run, at each threshold: the share of answers shown (confidence at least the
    threshold), the exact share among those, the share of its exact answers kept, and the
    edit similarity of the answers shown and of those hidden."""
    lines = ["answers shown only at a confidence (the first line's mean token probability)"
             " of at least:",
             f"{'run':<22}{'at least':>9}{'shown':>8}{'exact of shown':>16}{'exact kept':>12}"
             f"{'edit sim shown':>16}{'hidden':>8}"]
    for name, run in answers.items():
        known = [(c, a) for a in run if (c := confidence(a)) is not None]
        exact = sum(a.exact for _c, a in known)
        if not known:
            continue
        for threshold in THRESHOLDS:
            shown = [a for c, a in known if c >= threshold]
            hidden = [a for c, a in known if c < threshold]
            right = sum(a.exact for a in shown)
            lines.append(f"{name:<22}{threshold:>9.1f}{len(shown) / len(known):>8.0%}"
                         f"{(right / len(shown) if shown else 0):>16.0%}"
                         f"{(right / exact if exact else 0):>12.0%}"
                         f"{_similarity(shown):>16}{_similarity(hidden):>8}")
        lines.append(f"{name:<22}{'(' + str(len(known)) + ' answers with probabilities)':>45}")
    return "\n".join(lines)


def gate_table(answers: dict[str, list[Answer]]) -> str:
    """For each run with the section and its in-file run: the exact answers when the
    section's prompt answers only where the file alone's answer is less confident than a
    threshold (and how often it is asked), and when the more confident of the two answers."""
    lines = []
    for name, run in answers.items():
        base_name = in_file_run(name, {n: {} for n in answers})
        if base_name is None:
            continue
        pairs = [(cb, b, ca, a) for b, a in zip(answers[base_name], run)
                 if (cb := confidence(b)) is not None and (ca := confidence(a)) is not None]
        if not pairs:
            continue
        n = len(pairs)
        either = sum(a.exact or b.exact for _cb, b, _ca, a in pairs)
        lines.append(f"{name} only where {base_name} is unsure ({n} cases; {base_name}"
                     f" {sum(b.exact for _cb, b, _ca, _a in pairs)} exact, {name}"
                     f" {sum(a.exact for *_b, a in pairs)}, either {either}):")
        lines.append(f"{'below':>8}{'asked':>8}{'exact':>8}")
        for threshold in THRESHOLDS:
            asked = sum(cb < threshold for cb, *_rest in pairs)
            exact = sum(a.exact if cb < threshold else b.exact for cb, b, _ca, a in pairs)
            lines.append(f"{threshold:>8.1f}{asked / n:>8.0%}{exact:>8}")
        surer = sum(a.exact if ca >= cb else b.exact for cb, b, ca, a in pairs)
        lines.append(f"{'the more confident of the two':>30}: {surer} exact (both asked)")
    return "\n".join(lines)


def confidence_tables(answers: dict[str, list[Answer]]) -> str:
    """The hiding and gate tables; empty when no answer says its tokens' probabilities."""
    if not any(confidence(a) is not None for run in answers.values() for a in run):
        return ""
    gate = gate_table(answers)
    return hiding_table(answers) + (f"\n\n{gate}" if gate else "")


def _similarity(answers: list[Answer]) -> str:
    """The mean edit similarity of ``answers``, "-" for none."""
    if not answers:
        return "-"
    return f"{sum(a.edit_similarity for a in answers) / len(answers):.1f}"
