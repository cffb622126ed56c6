"""What idle work comes next: the queue of prompts to prepare, planned from events.

Plain functions of the queue, the document the user is in and the idle job running now, with
no event loop and no model: ``idle_runner.IdleRunner`` applies what they return. The order is
the policy: the branches of the last answer (Enter, accept) first, then what the user is looking
at (a cursor, a file's window), then other files'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..completion.next_prompts import HINTS, IN_VIEW, NextPrompt

Queue = list[NextPrompt]

Stop = Literal["no", "now", "after_chunk"]
"""What to do with the running idle job: let it run, stop it within its ubatch, or stop it
after the chunk it is on (which stays cached)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A new queue, and what becomes of the running job."""

    queue: Queue
    """The prompts to prepare, in order."""
    stop: Stop = "no"
    """What to do with the running job (see ``Stop``)."""


def on_request(queue: Queue, uri: str) -> Queue:
    """A request came for ``uri``: the plan made from the last answer is stale; files'
    windows and other files' cursors stay."""
    return [n for n in queue if n.kind == "window" or (n.kind == "cursor" and n.uri != uri)]


def on_answer(queue: Queue, branches: Queue, uri: str, running: NextPrompt | None) -> Plan:
    """An answer for ``uri`` was shown: its ``branches`` come first; a window or cursor being
    prepared yields to them (and goes on later from the chunks it finished, if it is for
    another file)."""
    rest = [n for n in queue if n.kind in HINTS and n.uri != uri]
    if branches and running is not None and running.kind in HINTS:
        if running.uri != uri:
            rest.append(running)
        return Plan(branches + rest, "now")
    return Plan(branches + rest)


def on_open(queue: Queue, window: NextPrompt) -> Queue:
    """A file was opened: its window replaces whatever was queued for it and goes last."""
    return [n for n in queue if n.uri != window.uri] + [window]


def on_cursor(queue: Queue, cursor: NextPrompt, running: NextPrompt | None) -> Plan:
    """The cursor came to rest in ``cursor.uri``: its prompt replaces the file's window,
    earlier cursor and full prompt and comes right after the file's Enter and accept
    branches; idle work for other files waits (a running one stops and goes on later from the
    chunks it finished), and a running full prompt of this file stops after its chunk (the
    cursor job plans the full prompt at the cursor when it reads a short one)."""
    uri = cursor.uri
    stop: Stop = "no"
    if running is not None and (running.uri != uri or running.kind in HINTS):
        stop = "now"
        if running.uri != uri:
            queue = [running] + queue
    elif running is not None and running.kind == "full":
        stop = "after_chunk"
    here = [n for n in queue if n.uri == uri and n.kind not in IN_VIEW]
    elsewhere = [n for n in queue if n.uri != uri]
    return Plan(here + [cursor] + elsewhere, stop)


def on_close(queue: Queue, uri: str) -> Queue:
    """A document closed: nothing is prepared for it any more."""
    return [n for n in queue if n.uri != uri]


def in_view(job: NextPrompt, focus: str | None) -> bool:
    """Whether ``job`` prepares the state of the document the user is in now: it may take
    another document's room in the cache, and other idle work must leave it alone (those of
    files opened or left before it may not)."""
    return job.kind in IN_VIEW and job.uri == focus


def after_job(queue: Queue, job: NextPrompt, read_short: bool, stopped: bool,
              focus: str | None, full_at: Callable[[NextPrompt], NextPrompt]) -> Queue:
    """A job ended. A cursor whose prompt was the short one for a cold cache, or a full
    prompt's job that read the short one with the other files' section first, not stopped,
    in the file the user is still in: the full prompt there comes next, so a user who reads
    the file before typing gets answers from it."""
    if read_short and not stopped and focus == job.uri:
        return [full_at(job)] + queue
    return queue
