"""``lsp-coder bench --floor``: is the server ever worse than the plain model?

Items are mid-line spans of real files in several languages (by default JavaScript, C and
Python found on this machine): a line is cut at a word boundary and a span of it up to a later
word boundary (or the line's end) is the answer. The same GGUF is asked in two ways:

- ``plain``: the model's own FIM tokens in PSM order around the text, 1,024 tokens above and
  256 below (``completion.prefix_tokens``/``suffix_tokens``), greedy, stopped at the first
  newline, in this process;
- the server, for a file just opened (no pause), as configured (``server``) and with
  ``idle.cold_prompt_ms = 0`` (``server, full prompt``), one line at most
  (``completion.max_lines = 1``) and the same ``max_tokens``.

It prints exact first lines per language and in total, and edit similarity; writes JSON and a
bar chart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sysconfig
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..client.session import Session
from ..config import Config, apply
from .scoring import edit_similarity, exact

LANGUAGES = {".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".c": "c",
             ".h": "c", ".py": "python"}
"""File suffix -> LSP language id."""

DEFAULT_ROOTS = {
    "javascript": ("/usr/lib/node_modules", "/usr/share/nodejs", "/usr/share/javascript"),
    "c": ("/usr/include",),
    "python": (sysconfig.get_paths()["stdlib"],),
}
"""Where files of each language are looked for when none are given."""

SKIPPED_DIRS = {"test", "tests", "__pycache__", "site-packages", "dist-packages", ".git"}
"""Folders not walked: test data and installed packages are not what a user writes."""

MAX_FILES_SCANNED = 4000
"""Files listed per language before the seeded draw (the walk stays bounded)."""

FILE_BYTES = (2_000, 200_000)
"""A drawn file's size bounds: big enough to have context, not a bundle."""

LINE_CHARS = (16, 160)
"""A drawn line's length without indentation."""

COMMENT_STARTS = ("#", "//", "/*", "*", '"', "'")
"""A line starting so is a comment or a string: not drawn."""

BLOCKS = {"python": (('"""', '"""'), ("'''", "'''")), "javascript": (("/*", "*/"),),
          "c": (("/*", "*/"),)}
"""Per language, the delimiters of comments and strings that span lines."""

LINE_COMMENT = {"python": "#", "javascript": "//", "c": "//"}
"""Per language, what starts a comment to the end of the line."""


@dataclass(frozen=True, slots=True)
class Span:
    """One item: ``text[offset:offset + len(expected)]`` was cut out."""

    path: str
    """The file."""
    language: str
    """Its LSP language id."""
    text: str
    """The file without the span."""
    offset: int
    """Where the span was (a str index into ``text``): the cursor."""
    expected: str
    """The span's text."""


def add_floor_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--floor", action="store_true",
                   help="instead: mid-line spans of JavaScript, C and Python files (or FILES),"
                        " the same GGUF with a plain PSM prompt vs the server, exact match per"
                        " language")
    p.add_argument("--floor-items", type=int, default=15, help="--floor: spans per language")


def find_files(language: str, roots: tuple[str, ...]) -> list[Path]:
    """Files of ``language`` under ``roots`` in a stable order (at most MAX_FILES_SCANNED)."""
    out: list[Path] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
            for name in sorted(files):
                path = Path(folder) / name
                if LANGUAGES.get(path.suffix) == language and not name.endswith(".min.js"):
                    out.append(path)
                    if len(out) >= MAX_FILES_SCANNED:
                        return out
    return out


def _boundaries(line: str, start: int) -> list[int]:
    """Positions from ``start`` on that do not fall inside a word."""
    return [i for i in range(start, len(line) + 1)
            if i == len(line) or not (line[i - 1].isalnum() or line[i - 1] == "_")
            or not (line[i].isalnum() or line[i] == "_")]


def code_lines(lines: list[str], language: str) -> list[int]:
    """The lines that begin outside a comment or string spanning lines and are not comment
    lines themselves (a delimiter inside a one-line string may fool it: rare, harmless)."""
    out = []
    closing = None
    for i, line in enumerate(lines):
        inside = closing is not None
        pos = 0
        while True:
            if closing is not None:
                end = line.find(closing, pos)
                if end < 0:
                    break
                pos, closing = end + len(closing), None
                continue
            found = [(line.find(a, pos), a, b) for a, b in BLOCKS.get(language, ())]
            found = [f for f in found if f[0] >= 0]
            if not found:
                break
            at, opening, closing = min(found)
            pos = at + len(opening)
        if not inside and not line.strip().startswith(COMMENT_STARTS):
            out.append(i)
    return out


def _code_end(line: str, language: str) -> int:
    """Where the line's code ends: before a comment that closes the line."""
    ends = [line.find(m) for m in (LINE_COMMENT.get(language, ""),
                                   *(a for a, _ in BLOCKS.get(language, ()))) if m]
    ends = [e for e in ends if e > 0]
    return min(ends, default=len(line))


def cut_span(path: Path, language: str, rng: random.Random) -> Span | None:
    """A span of one drawn line of ``path`` (None when the file has no usable line)."""
    try:
        if not FILE_BYTES[0] <= path.stat().st_size <= FILE_BYTES[1]:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    candidates = [i for i in code_lines(lines, language)
                  if LINE_CHARS[0] <= len(lines[i].strip()) <= LINE_CHARS[1]]
    if not candidates:
        return None
    i = rng.choice(candidates)
    line = lines[i]
    indent = len(line) - len(line.lstrip())
    code_end = _code_end(line, language)
    starts = [b for b in _boundaries(line, indent + 1) if b <= code_end - 4]
    if not starts:
        return None
    start = rng.choice(starts)
    ends = [b for b in _boundaries(line, start + 3) if line[start:b].strip() and b <= code_end]
    if not ends:
        return None
    end = rng.choice(ends)
    line_start = sum(len(x) + 1 for x in lines[:i])
    return Span(str(path), language, text[: line_start + start] + text[line_start + end :],
                line_start + start, line[start:end])


def draw_spans(files_by_language: dict[str, list[Path]], per_language: int,
               seed: int) -> list[Span]:
    """``per_language`` spans of each language, one per file, by a seeded draw."""
    spans: list[Span] = []
    for language, files in files_by_language.items():
        rng = random.Random(f"{seed}:{language}")
        order = sorted(files)
        rng.shuffle(order)
        taken = 0
        for path in order:
            if taken >= per_language:
                break
            span = cut_span(path, language, rng)
            if span is not None:
                spans.append(span)
                taken += 1
    return spans


def plain_answers(config: Config, spans: list[Span], max_tokens: int) -> list[str]:
    """The plain PSM prompt's first line for every span, from the same GGUF in-process."""
    from ..engine.engine import Engine
    from ..engine.generator import GenerateRequest
    from ..model_files import resolve_model_paths

    target, _ = resolve_model_paths(config)
    engine = Engine(target, None, config)
    try:
        template = engine.template
        if not template.has_fim:
            raise RuntimeError("the model has no FIM tokens: --floor needs them")
        head = [template.bos] if template.bos >= 0 else []
        cc = config.completion
        out = []
        for span in spans:
            above = engine.tokenize(span.text[: span.offset])[-cc.prefix_tokens :]
            below = engine.tokenize(span.text[span.offset :])[: cc.suffix_tokens]
            prompt = [*head, template.prefix, *above, template.suffix, *below, template.middle]
            result = engine.generate(GenerateRequest(
                prompt=prompt, max_tokens=max_tokens, speculative=False,
                stop=lambda t: t.find("\n") if "\n" in t else None))
            out.append(result.text)
    finally:
        engine.close()
    return out


async def server_answers(name: str, spans: list[Span], options: dict[str, Any]) -> list[str]:
    """The server's suggestion for every span, each in a file just opened and then closed."""
    session = Session(options)
    totals = await session.start()
    if not totals.get("model_loaded"):
        await session.close()
        raise RuntimeError(f"{name}: the model did not load: {totals.get('error')}")
    out = []
    try:
        for i, span in enumerate(spans):
            uri = Path(span.path).resolve().as_uri()
            session.open(uri, span.text, span.language)
            out.append(await session.inline(span.offset))
            session.client.text_document_did_close(_close(uri))
            print(f"  {name} {i + 1}/{len(spans)}", flush=True)
    finally:
        await session.close()
    return out


def _close(uri: str):
    from lsprotocol import types

    return types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))


def summarize(spans: list[Span], answers: list[str]) -> dict[str, dict[str, float]]:
    """Per language and ``total``: items, exact first lines, mean edit similarity."""
    groups: dict[str, list[tuple[Span, str]]] = {}
    for span, answer in zip(spans, answers):
        groups.setdefault(span.language, []).append((span, answer))
        groups.setdefault("total", []).append((span, answer))
    return {language: {"items": len(pairs),
                       "exact": sum(exact(a, s.expected) for s, a in pairs),
                       "edit_similarity": sum(edit_similarity(a, s.expected)
                                              for s, a in pairs) / len(pairs)}
            for language, pairs in groups.items()}


def table(summaries: dict[str, dict[str, dict[str, float]]]) -> str:
    languages = list(next(iter(summaries.values())))
    width = max(len(n) for n in summaries) + 2
    lines = [" " * width + "".join(f"{lang:>16}" for lang in languages)]
    for name, per in summaries.items():
        cells = "".join(f"{per[lang]['exact']:>6.0f}/{per[lang]['items']:<3.0f}"
                        f"{per[lang]['edit_similarity']:>6.1f}" for lang in languages)
        lines.append(f"{name:<{width}}{cells}")
    lines.append("(exact first lines / items, then mean edit similarity)")
    return "\n".join(lines)


def plot(summaries: dict[str, dict[str, dict[str, float]]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    runs = list(summaries)
    languages = list(next(iter(summaries.values())))
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(runs)
    for k, run in enumerate(runs):
        ax.bar([x + k * width for x in range(len(languages))],
               [100 * summaries[run][lang]["exact"] / summaries[run][lang]["items"]
                for lang in languages], width, label=run)
    ax.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(languages))], languages)
    ax.set_ylabel("exact first line (%)")
    ax.set_title("lsp-coder: the server against a plain PSM prompt, mid-line spans")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run_floor(args: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    if args.files:
        files: dict[str, list[Path]] = {}
        for f in args.files:
            language = LANGUAGES.get(Path(f).suffix)
            if language is not None:
                files.setdefault(language, []).append(Path(f))
    else:
        files = {lang: find_files(lang, roots) for lang, roots in DEFAULT_ROOTS.items()}
    spans = draw_spans(files, args.floor_items, args.seed)
    counts = {lang: sum(s.language == lang for s in spans) for lang in files}
    print(f"bench --floor: {len(spans)} spans ({', '.join(f'{k} {v}' for k, v in counts.items())})",
          flush=True)
    plain_config = apply(Config(), {**base, "model": {**base["model"], "draft_path": "none"}},
                         "bench")
    answers = {"plain": plain_answers(plain_config, spans, args.max_tokens)}
    print("  plain done", flush=True)
    plans = {"server": base,
             "server, full prompt": {**base, "idle": {**base["idle"], "cold_prompt_ms": 0}}}
    for name, options in plans.items():
        answers[name] = asyncio.run(server_answers(name, spans, options))
    summaries = {name: summarize(spans, a) for name, a in answers.items()}
    print()
    print(table(summaries))
    args.out.mkdir(parents=True, exist_ok=True)
    png = args.out / "floor.png"
    if plot(summaries, png):
        print(f"plot: {png}")
    raw = {"seed": args.seed, "summaries": summaries,
           "spans": [{k: v for k, v in asdict(s).items() if k != "text"} for s in spans],
           "answers": answers}
    (args.out / "floor.json").write_text(json.dumps(raw, indent=1))
    print(f"raw numbers: {args.out / 'floor.json'}")
    return summaries
