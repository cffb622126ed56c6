"""``lsp-coder bench reuse``: how many prompt tokens each key makes the engine read while one
editor types files back, with no idle work and no timing in the way.

The files are typed back key by key (``make_trace``, Enter as an editor indents it, the
indentation fixed by Backspace as ``bench idle`` does; no suggestion is accepted), in process,
each key asking for one token. The prefill speed the short prompts for a cold cache are chosen
by is pinned (``--token-ms``), so the prompts are the same on any machine and with any GGUF of
the model's tokenizer: a change to how prompts are built shows here in a minute, as the tokens
it saves or costs, where ``bench idle`` mixes it with the pauses' idle work and the CPU's pace.
With ``--branches`` idle work's Enter branch is read in full after each key at a line's end (as
if every pause were long enough), and its reads are counted apart (kind ``branch``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..client.trace import Trace, default_files, make_trace
from ..completion.next_prompts import after_answer
from ..completion.records import CompletionRequest
from ..completion.service import CompletionService
from ..config import Config, apply
from .human import indentation_fix, press_enter
from .options import server_options

KINDS = ("open", "mid", "enter", "back")
"""A key's kind: the first in a file, one typed on a line, Enter, Backspace after Enter."""

BRANCH = "branch"
"""The kind of an idle Enter branch's read (``--branches``), not a key's."""

LARGE_READ = 100
"""A key that reads more prompt tokens than this read part of its prompt again (a typed key
reads a few)."""


@dataclass(frozen=True, slots=True)
class KeyRead:
    """What one key's request read."""

    file: str
    """The file's name."""
    kind: str
    """One of ``KINDS``, or ``BRANCH``."""
    prompt_tokens: int
    """Tokens in its prompt."""
    read_tokens: int
    """Prompt tokens the engine evaluated (the rest came from the KV cache)."""
    short_prompt: bool
    """The prompt was the short one for a cold cache."""


def type_back(service: CompletionService, trace: Trace, token_ms: float,
              branches: bool = False) -> list[KeyRead]:
    """Type ``trace`` back key by key, asking at each key (the prefill speed pinned);
    ``branches``: then reading the Enter branch where the cursor is at a line's end."""
    costs = service.backend.engine.costs
    uri, name = trace.path.as_uri(), trace.path.name
    text, offset, typed = trace.text, trace.offset, trace.typed
    python = trace.path.suffix in (".py", ".pyi")
    out: list[KeyRead] = []

    def ask(kind: str) -> None:
        costs.prefill_token_ms = token_ms
        stats = service.complete(CompletionRequest(uri=uri, text=text, offset=offset,
                                                   path=str(trace.path))).stats
        if stats is not None:
            out.append(KeyRead(name, kind, stats.prompt_tokens, stats.evaluated_tokens,
                               stats.short_prompt))
        # The branches idle work plans after an answer with no suggestion: Enter, at a
        # line's end.
        for enter in after_answer(uri, str(trace.path), text, offset, "") if branches else ():
            costs.prefill_token_ms = token_ms
            read = service.prefill(enter, enter.state(), lambda: False)
            if read is not None:
                out.append(KeyRead(name, BRANCH, read.prompt_tokens, read.evaluated_tokens,
                                   read.short_prompt))

    i = 0
    while i < len(typed):
        if typed[i] == "\n":
            at, chars, offset, indent = press_enter(text, offset, python)
            text = text[:at] + chars + text[at:]
            ask("enter")
            back, i = indentation_fix(typed, i + 1, indent)
            if back:
                text = text[: offset - back] + text[offset:]
                offset -= back
                ask("back")
            continue
        text = text[:offset] + typed[i] + text[offset:]
        offset, i = offset + 1, i + 1
        ask("open" if not out else "mid")
    return out


def summary(reads: list[KeyRead]) -> dict[str, Any]:
    """Keys, prompt tokens, tokens read, the share from the cache, large reads, by kind; and
    the Enter branches' reads."""
    keys = [k for k in reads if k.kind != BRANCH]
    branch_reads = [k.read_tokens for k in reads if k.kind == BRANCH]
    prompt = sum(k.prompt_tokens for k in keys)
    read = sum(k.read_tokens for k in keys)
    return {"keys": len(keys), "prompt_tokens": prompt, "read_tokens": read,
            "from_cache": 1 - read / prompt if prompt else 0.0,
            "large_reads": sum(k.read_tokens > LARGE_READ for k in keys),
            "read_by_kind": {kind: sum(k.read_tokens for k in keys if k.kind == kind)
                             for kind in KINDS},
            "branches": len(branch_reads), "branch_read_tokens": sum(branch_reads),
            "branch_large_reads": sum(r > LARGE_READ for r in branch_reads)}


def report(files: dict[str, dict[str, Any]]) -> str:
    """The table ``run_prompt_reuse`` prints."""
    lines = [f"{'file':32} {'keys':>5} {'prompt tokens':>14} {'read':>7} {'from cache':>11}"
             f" {'reads > ' + str(LARGE_READ):>11}  read by kind"]
    for name, s in files.items():
        kinds = ", ".join(f"{k} {v:,}" for k, v in s["read_by_kind"].items())
        if s["branches"]:
            kinds += (f"; {s['branches']} Enter branches read {s['branch_read_tokens']:,}"
                      f" ({s['branch_large_reads']} over {LARGE_READ})")
        lines.append(f"{name:32} {s['keys']:>5} {s['prompt_tokens']:>14,} {s['read_tokens']:>7,}"
                     f" {100 * s['from_cache']:>10.1f}% {s['large_reads']:>11}  {kinds}")
    return "\n".join(lines)


def run_prompt_reuse(args: argparse.Namespace) -> dict[str, Any]:
    """Type every file back in one service (files one after another, as ``bench idle``)."""
    paths: list[Path] = args.files or default_files()
    options = server_options(args, idle={"cold_prompt_ms": args.cold_ms},
                             completion={"max_tokens": 1}, speculative={"enabled": False})
    service = CompletionService(apply(Config(), options, "bench reuse"))
    error = service.load()
    if error is not None or getattr(service.backend, "engine", None) is None:
        raise SystemExit(f"bench reuse: needs a local model ({error or 'a remote backend'})")
    try:
        keys: list[KeyRead] = []
        for path in paths:
            keys += type_back(service, make_trace(path, args.lines), args.token_ms,
                              args.branches)
    finally:
        service.close()
    files = {name: summary([k for k in keys if k.file == name])
             for name in dict.fromkeys(k.file for k in keys)}
    files["all"] = summary(keys)
    idle = "the Enter branch read at each line's end" if args.branches else "no idle work"
    print(f"bench reuse: {len(paths)} files, {args.lines} lines each, every key asks, {idle};"
          f" idle.cold_prompt_ms {args.cold_ms}, prefill pinned at {args.token_ms} ms a token")
    print(report(files))
    args.out.mkdir(parents=True, exist_ok=True)
    raw = {"files": files, "keys": [asdict(k) for k in keys]}
    (args.out / "reuse.json").write_text(json.dumps(raw, indent=1))
    print(f"raw: {args.out / 'reuse.json'}")
    return raw
