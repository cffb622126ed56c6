"""``lsp-coder bench fim``: prompt layouts on held-out holes, in one run.

The layouts: PSM, SPM, and PSM with the recent lines after the middle token
(``completion.recent_lines``; the setting's value, 8 unless configured otherwise), and that
last one cut to the short prompt for a cold cache (``idle.cold_prompt_tokens``).

For each layout it measures what decides the default for a model family:

- quality: holes cut mid-line from real files; how often the first suggested line equals the
  cut text exactly;
- reuse: typing a few characters and then a new line at each hole; how many prompt tokens
  each keystroke had to evaluate (SPM keeps the code below the cursor cached across a new
  line, PSM re-reads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..backends.local_prompt import build_prompt
from ..backends.short_window import COLD_WINDOW_STEP_LINES, cold_budgets
from ..completion.context import split_document
from ..completion.service import CompletionService
from ..config import Config
from ..engine.generate_request import GenerateRequest
from ..prompt_parts import WINDOW_QUANTUM_LINES


@dataclass(frozen=True, slots=True)
class Hole:
    text: str
    offset: int
    expected: str


def holes(path: Path, count: int) -> list[Hole]:
    """Lines of code cut after their first third; the rest of the line is the answer."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    candidates = [i for i, line in enumerate(lines)
                  if len(line.strip()) > 16 and not line.strip().startswith(("#", '"', "'"))]
    step = max(1, len(candidates) // (count + 1))
    out = []
    for i in candidates[step::step][:count]:
        start = sum(len(x) for x in lines[:i])
        body = lines[i].rstrip("\n")
        indent = len(body) - len(body.lstrip())
        cut = indent + max(2, (len(body) - indent) // 3)
        out.append(Hole(source[: start + cut] + source[start + len(body) :], start + cut,
                        body[cut:]))
    return out


def measure(config: Config, files: list[Path], per_file: int) -> dict[str, dict[str, float]]:
    service = CompletionService(config)
    error = service.load()
    if error:
        raise RuntimeError(error)
    engine = service.backend.engine
    template = engine.template
    cc = config.completion
    results: dict[str, dict[str, float]] = {}
    cases = [h for f in files for h in holes(f, per_file)]

    recent = cc.recent_lines or 8
    full = (cc.prefix_tokens, cc.suffix_tokens, WINDOW_QUANTUM_LINES)
    variants = {"psm": ("psm", 0, full), "spm": ("spm", 0, full),
                f"psm+{recent}": ("psm", recent, full)}
    cold = config.idle.cold_prompt_tokens
    if cold:
        prefix, suffix = cold_budgets(cc.prefix_tokens, cc.suffix_tokens, cold)
        variants[f"psm+{recent}, {cold} tok"] = ("psm", recent,
                                                   (prefix, suffix, COLD_WINDOW_STEP_LINES))

    def prompt(text: str, offset: int, variant: tuple[str, int, tuple[int, int, int]]):
        layout, recent_lines, (prefix_tokens, suffix_tokens, step) = variant
        parts = split_document(text, offset, prefix_tokens=cc.prefix_tokens,
                               suffix_tokens=cc.suffix_tokens, recent_lines=recent_lines)
        return build_prompt(template, parts, engine.tokenize, engine.detokenize,
                            prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens,
                            extra_tokens=0, layout=layout, window_step_lines=step)

    for name, variant in variants.items():
        engine.cache.clear()
        exact = evaluated = keys = 0
        for hole in cases:
            p = prompt(hole.text, hole.offset, variant)
            result = engine.generate(GenerateRequest(
                prompt=p.tokens, heal=p.heal, max_tokens=32, speculative=False,
                stop=lambda t: t.find("\n") if "\n" in t else None))
            exact += result.text.strip() == hole.expected.strip()
            # Type three characters of the answer, then a new line: what does each cost?
            text, offset = hole.text, hole.offset
            for ch in hole.expected[:3] + "\n":
                text = text[:offset] + ch + text[offset:]
                offset += 1
                p = prompt(text, offset, variant)
                r = engine.generate(GenerateRequest(prompt=p.tokens, heal=p.heal, max_tokens=1,
                                                    speculative=False))
                evaluated += r.stats.evaluated_tokens
                keys += 1
        results[name] = {"holes": len(cases), "exact": exact,
                           "exact_rate": exact / max(1, len(cases)),
                           "evaluated_per_key": evaluated / max(1, keys)}
    service.close()
    return results


def report(results: dict[str, dict[str, float]]) -> str:
    lines = [f"{'layout':<18}{'first line exact':>20}{'tokens evaluated / key':>26}"]
    for layout, r in results.items():
        lines.append(f"{layout:<18}{r['exact']:>9.0f}/{r['holes']:<4.0f} ({r['exact_rate']:4.0%})"
                     f"{r['evaluated_per_key']:>26.1f}")
    return "\n".join(lines)
