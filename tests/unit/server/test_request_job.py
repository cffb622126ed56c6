"""What a request's work shares with the next request, and how a cancel stops it."""

from __future__ import annotations

import asyncio

import pytest

from lsp_coder.server.request_job import SHARED_READ_LINES, Pending, cursor_line
from lsp_coder.shared_types import StopReason


@pytest.fixture
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_a_request_near_the_cursor_of_the_same_session_and_document_shares_the_read(loop):
    owner, other = object(), object()
    work = Pending("file:///a.py", owner, loop.create_future(), line=40)
    assert work.shares_read(owner, "file:///a.py", 40)
    assert work.shares_read(owner, "file:///a.py", 40 + SHARED_READ_LINES)
    assert work.shares_read(owner, "file:///a.py", 40 - SHARED_READ_LINES)
    assert not work.shares_read(owner, "file:///a.py", 41 + SHARED_READ_LINES)
    assert not work.shares_read(owner, "file:///a.py", 0)
    assert not work.shares_read(owner, "file:///b.py", 40)
    assert not work.shares_read(other, "file:///a.py", 40)


def test_an_unknown_line_counts_as_near(loop):
    owner = object()
    unknown = Pending("file:///a.py", owner, loop.create_future())
    assert unknown.shares_read(owner, "file:///a.py", 900)
    known = Pending("file:///a.py", owner, loop.create_future(), line=900)
    assert known.shares_read(owner, "file:///a.py", -1)


def test_a_cancel_lets_a_running_read_end_and_stops_queued_work(loop):
    running = Pending("file:///a.py", object(), loop.create_future(), line=3)
    running.cancel(running=True)
    assert running.yielding.is_set() and not running.token.is_set()
    assert running.answer.result().stop_reason == StopReason.CANCELLED
    queued = Pending("file:///a.py", object(), loop.create_future(), line=3)
    queued.cancel(running=False)
    assert queued.token.is_set() and not queued.yielding.is_set()
    assert queued.answer.result().stop_reason == StopReason.CANCELLED


def test_the_cursor_line_counts_the_line_breaks_before_the_cursor():
    text = "a\nb\n\nc"
    assert cursor_line(text, 0) == 0
    assert cursor_line(text, 2) == 1
    assert cursor_line(text, len(text)) == 3
