"""``lsp-coder bench floor``: is the server ever worse than the plain model?

Items are mid-line spans of real files in several languages (by default JavaScript, C and
Python found on this machine): a line is cut at a word boundary and a span of it up to a later
word boundary (or the line's end) is the answer; with ``--humaneval``, HumanEval's
single-line infilling items instead (``humaneval.py``). The same GGUF is asked in two ways:

- ``plain``: the model's own FIM tokens in PSM order around the text, 1,024 tokens above and
  256 below (``completion.prefix_tokens``/``suffix_tokens``), greedy, stopped at the first
  newline, in this process;
- the server, for a file just opened, as configured (``server``) and with
  ``idle.cold_prompt_ms = 0`` (``server, full prompt``), one line at most
  (``completion.max_lines = 1``) and the same ``max_tokens``; asked at once, or with
  ``--open-pause-ms`` that long after the client reported the cursor (as VS Code does where
  it rests), the time idle work has to read the prompt.

It prints exact first lines per language and in total, and edit similarity; writes JSON and a
bar chart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..client.session import Session
from ..config import Config, apply
from .figures import pyplot, save
from .floor_spans import DEFAULT_ROOTS, LANGUAGES, Span, draw_spans, find_files
from .humaneval import data_file, draw_items
from .scoring import edit_similarity, exact


def plain_answers(config: Config, spans: list[Span], max_tokens: int) -> list[str]:
    """The plain PSM prompt's first line for every span, from the same GGUF in-process."""
    from ..engine.engine import Engine
    from ..engine.generate_request import GenerateRequest
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
            prompt = [*head, template.prefix, *template.prefix_lead, *above, template.suffix,
                      *below, template.middle]
            result = engine.generate(GenerateRequest(
                prompt=prompt, max_tokens=max_tokens, speculative=False,
                stop=lambda t: t.find("\n") if "\n" in t else None))
            out.append(result.text)
    finally:
        engine.close()
    return out


async def server_answers(name: str, spans: list[Span], options: dict[str, Any],
                         open_pause_ms: float = 0.0) -> list[str]:
    """The server's suggestion for every span, each in a file just opened (asked
    ``open_pause_ms`` after the cursor was reported, at once for 0) and then closed."""
    session = Session(options)
    await session.start_loaded(name)
    out = []
    try:
        for i, span in enumerate(spans):
            uri = Path(span.path).resolve().as_uri()
            session.open(uri, span.text, span.language)
            if open_pause_ms > 0:
                await session.highlight(span.offset)
                await asyncio.sleep(open_pause_ms / 1000)
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


def plot(summaries: dict[str, dict[str, dict[str, float]]], path: Path, items: str) -> bool:
    plt = pyplot()
    if plt is None:
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
    ax.set_title(f"lsp-coder: the server against a plain PSM prompt, {items}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    save(plt, fig, path)
    return True


def mid_line_spans(args: argparse.Namespace) -> list[Span]:
    """The mid-line spans of ``args.files`` or of the default roots' files."""
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
    print(f"bench floor: {len(spans)} spans ({', '.join(f'{k} {v}' for k, v in counts.items())})",
          flush=True)
    return spans


def run_floor(args: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    if args.humaneval is not None:
        path = data_file(args.humaneval)
        spans = draw_items(path, args.floor_items, args.seed)
        print(f"bench floor: {len(spans)} HumanEval single-line items ({path})", flush=True)
    else:
        spans = mid_line_spans(args)
    plain_config = apply(Config(), {**base, "model": {**base["model"], "draft_path": "none"}},
                         "bench")
    answers = {"plain": plain_answers(plain_config, spans, args.max_tokens)}
    print("  plain done", flush=True)
    plans = {"server": base,
             "server, full prompt": {**base, "idle": {**base["idle"], "cold_prompt_ms": 0}}}
    for name, options in plans.items():
        answers[name] = asyncio.run(server_answers(name, spans, options, args.open_pause_ms))
    summaries = {name: summarize(spans, a) for name, a in answers.items()}
    print()
    print(table(summaries))
    args.out.mkdir(parents=True, exist_ok=True)
    png = args.out / "floor.png"
    if plot(summaries, png, "HumanEval single lines" if args.humaneval is not None
            else "mid-line spans"):
        print(f"plot: {png}")
    raw = {"seed": args.seed, "open_pause_ms": args.open_pause_ms, "summaries": summaries,
           "spans": [{k: v for k, v in asdict(s).items() if k != "text"} for s in spans],
           "answers": answers}
    (args.out / "floor.json").write_text(json.dumps(raw, indent=1))
    print(f"raw numbers: {args.out / 'floor.json'}")
    return summaries
