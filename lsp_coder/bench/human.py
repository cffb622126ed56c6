"""``lsp-coder bench idle``: typing at a human cadence, idle-time prefill off and on.

Each file is opened with the cursor where the typing will start (the client asks for the
highlights there, as VS Code and Emacs eglot do wherever the cursor rests; ``--no-highlight``:
it does not, as Neovim and Helix by default), left alone for ``--open-pause-ms`` (the user
reads it), then its cut lines are typed back: one key every ``--key-ms``, a pause of
``--line-pause-ms`` at each line's end before Enter, Enter inserting the indentation an editor
would (fixed up with spaces or backspaces when the file has another; on a blank line the
indentation moves down with the cursor, as VS Code's ``editor.trimAutoWhitespace`` does, so a
blank line in the file is typed as two Enters), and a suggestion accepted (``--read-ms``
after it shows) when the file goes on with it. Every request is classified by the keystroke
it follows:

- ``open``: the first in a file opened ``--open-pause-ms`` earlier;
- ``enter``: right after Enter;
- ``accept``: right after accepting a suggestion;
- ``mid``: any other key typed within a line.

The same traces run with ``[idle] enabled = false`` and ``true`` in one invocation.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..client.session import Session
from ..client.trace import Trace
from .human_confidence import answer_confidence

KINDS = ("open", "enter", "accept", "mid", "mid_model")
"""``mid_model``: the mid-line keys that reached the model (not answered from the suggestion
cache), the fair comparison for a key after Enter or accepting."""


@dataclass(slots=True)
class Key:
    """One request and how it was answered."""

    kind: str
    """The keystroke it follows (``KINDS``: open, enter, accept, mid)."""
    latency_ms: float
    """From the request sent to its answer, in the client."""
    cached: bool
    """Answered from the suggestion cache, without the model."""
    prompt_tokens: int = 0
    """Tokens of its prompt."""
    reused_tokens: int = 0
    """Of those, the tokens the KV cache already held."""
    evaluated_tokens: int = 0
    """Prompt tokens the model evaluated for it (those not reused)."""
    text: str = ""
    """The suggestion."""
    pressed: str = ""
    """What the user did: the character typed, ``Enter``, ``Backspace xN`` or ``accept``."""
    confidence: float | None = None
    """The model's confidence in the first line of the answer the suggestion came from (one
    from the suggestion cache: the last answer the model gave); None when unknown."""
    unsure: bool = False
    """The model answered, and the answer was hidden as unsure (``completion.min_confidence``)."""


@dataclass(slots=True)
class HumanRun:
    """One pass over the traces with one plan of settings."""

    name: str
    """The plan it ran (``idle off``, ``idle on``, ``prefill``, ...)."""
    keys: list[Key] = field(default_factory=list)
    """Every request, in the order typed."""
    accepted_chars: int = 0
    """Characters of the files typed by accepting suggestions (what the suggestions were worth)."""
    accepted: list[tuple[int, float | None]] = field(default_factory=list)
    """Each accepted part: its characters and the confidence of the answer it came from."""
    totals: dict[str, Any] = field(default_factory=dict)
    """The server's ``lspCoder.stats`` totals at the run's end."""
    wall_s: float = 0.0
    """How long the run took."""


@dataclass(frozen=True, slots=True)
class Cadence:
    """How fast the simulated user types and reads."""

    key_ms: float = 120.0
    """Between two keys within a line."""
    line_pause_ms: float = 1500.0
    """At a line's end, before Enter."""
    read_ms: float = 800.0
    """Reading a suggestion, from when it shows, before accepting it."""
    open_pause_ms: float = 2000.0
    """After opening a file, before typing."""
    highlight: bool = True
    """Ask for the highlights at the cursor when a file is opened."""


def editor_indent(line: str, python: bool = True) -> str:
    """What an editor inserts after Enter at the end of ``line`` (VS Code's Python rules)."""
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    if body.endswith((":", "{", "(", "[")):
        return indent + "    "
    if python and body.split(" ", 1)[0] in ("return", "pass", "break", "continue", "raise"):
        return indent[:-4]
    return indent


def press_enter(text: str, offset: int, python: bool) -> tuple[int, str, int, str]:
    """Enter at the end of a line: where it inserts what, the cursor after it, and the new
    line's indentation. On a blank line the indentation moves down with the cursor (VS Code's
    ``editor.trimAutoWhitespace``), so a blank line in a file is typed as two Enters."""
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:offset]
    if not line.strip():
        return line_start, "\n", offset + 1, line
    indent = editor_indent(line, python)
    return offset, "\n" + indent, offset + 1 + len(indent), indent


def indentation_fix(typed: str, i: int, indent: str) -> tuple[int, int]:
    """After Enter gave ``indent`` with ``typed[i:]`` left to type: how many characters to
    Backspace, and where typing goes on (the rest of a deeper indentation is typed key by key;
    before a blank line nothing is fixed, its Enter moves the indentation on)."""
    want = typed[i : len(typed) - len(typed[i:].lstrip(" \t"))]
    if want.startswith(indent):
        return 0, i + len(indent)
    if typed[i : i + 1] == "\n":
        return 0, i
    common = len(want) if indent.startswith(want) else 0
    return len(indent) - common, i + common


def _accepted_part(suggestion: str, rest: str) -> str:
    """The longest whole suggestion or whole-line prefix of it that the file goes on with."""
    cuts = [suggestion] + [suggestion[: i + 1] for i, c in enumerate(suggestion) if c == "\n"]
    for part in sorted(cuts, key=len, reverse=True):
        if len(part.strip()) >= 2 and rest.startswith(part):
            return part
    return ""


async def _ask(session: Session, offset: int, kind: str, run: HumanRun, pressed: str) -> Key:
    sent = time.perf_counter()
    text = await session.inline(offset)
    latency = (time.perf_counter() - sent) * 1000
    recent = (await session.stats())["recent"][-1]
    key = Key(kind, latency, recent["cached"], text=text, pressed=pressed,
              unsure=recent.get("outcome") == "unsure")
    key.confidence = answer_confidence(recent, run.keys)
    for attr in ("prompt_tokens", "reused_tokens", "evaluated_tokens"):
        setattr(key, attr, recent.get(attr, 0))
    run.keys.append(key)
    if len(run.keys) % 20 == 0:
        print(f"  {run.name}: {len(run.keys)} keys", flush=True)
    return key


async def _pause(ms: float, since: float) -> None:
    left = ms / 1000 - (time.perf_counter() - since)
    if left > 0:
        await asyncio.sleep(left)


async def replay_human(name: str, traces: list[Trace], options: dict[str, Any],
                       cadence: Cadence, accept: bool = True,
                       server_log: Path | None = None) -> HumanRun:
    """Type every trace at a human cadence; ask after every key (see the module docstring)."""
    session = Session(options, server_log=server_log)
    run = HumanRun(name)
    start = time.perf_counter()
    await session.start_loaded(name)
    try:
        for trace in traces:
            session.open(trace.uri, trace.text)
            opened = time.perf_counter()
            if cadence.highlight:
                await session.highlight(trace.offset)
            await _pause(cadence.open_pause_ms, opened)
            await _type_trace(session, trace, run, cadence, accept)
            print(f"  {name}: {trace.path.name} done, {len(run.keys)} keys", flush=True)
        run.totals = (await session.stats())["totals"]
        for message in session.messages:  # a setting the server refused, a failure
            print(f"  {name}: the server said: {message}", flush=True)
    finally:
        await session.close()
    run.wall_s = time.perf_counter() - start
    return run


async def _type_trace(session: Session, trace: Trace, run: HumanRun, cadence: Cadence,
                      accept: bool) -> None:
    typed, i, offset, kind = trace.typed, 0, trace.offset, "open"
    python = trace.path.suffix == ".py"
    while i < len(typed):
        if typed[i] == "\n":
            await asyncio.sleep(cadence.line_pause_ms / 1000)
            at, chars, offset, indent = press_enter(session.text, offset, python)
            session.insert(at, chars)
            i += 1
            sent = time.perf_counter()
            await _ask(session, offset, "enter", run, "Enter")
            back, i = indentation_fix(typed, i, indent)
            if back:  # the file indents less: Backspace to its indentation
                await _pause(cadence.key_ms, sent)
                offset = session.delete(offset, back)
                sent = time.perf_counter()
                await _ask(session, offset, "mid", run, f"Backspace x{back}")
            await _pause(cadence.key_ms, sent)
            kind = "mid"
            continue
        offset = session.insert(offset, typed[i])
        i += 1
        sent = time.perf_counter()
        shown = await _ask(session, offset, kind, run, typed[i - 1])
        kind = "mid"
        part = _accepted_part(shown.text, typed[i:]) if accept else ""
        if part:  # the suggestion is read once it shows
            await asyncio.sleep(cadence.read_ms / 1000)
            offset = session.insert(offset, part)
            i += len(part)
            run.accepted_chars += len(part)
            run.accepted.append((len(part), shown.confidence))
            sent = time.perf_counter()
            await _ask(session, offset, "accept", run, "accept")
        await _pause(cadence.key_ms, sent)
