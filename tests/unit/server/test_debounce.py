"""The adaptive debounce: none when the client waits itself, shorter when answers are fast."""

from __future__ import annotations

from lsp_coder.completion.service import CompletionService
from lsp_coder.config import Config
from lsp_coder.server.host import EngineHost
from lsp_coder.server.scheduler import Scheduler
from lsp_coder.server.stats import Stats


def scheduler(ceiling_ms: float = 150.0) -> Scheduler:
    host = EngineHost()
    return Scheduler(CompletionService(Config()), Stats(), host,
                     lambda: ceiling_ms)


def test_first_request_of_a_document_does_not_wait():
    assert scheduler().debounce_s("file:///a.py") == 0.0


def test_a_client_that_already_spaces_its_requests_pays_nothing():
    s = scheduler()
    s._note_request("file:///a.py")
    s._timing["file:///a.py"].interval_ms = 200.0  # Neovim 0.12 waits 200 ms itself
    assert s.debounce_s("file:///a.py") == 0.0


def test_fast_typing_waits_the_ceiling_or_half_when_answers_are_fast():
    s = scheduler()
    s._note_request("file:///a.py")
    s._timing["file:///a.py"].interval_ms = 60.0
    s._recent_latency_ms = 900.0
    assert s.debounce_s("file:///a.py") == 0.150
    s._recent_latency_ms = 40.0
    assert s.debounce_s("file:///a.py") == 0.075


def test_a_zero_ceiling_turns_debounce_off():
    s = scheduler(0.0)
    s._note_request("file:///a.py")
    s._timing["file:///a.py"].interval_ms = 10.0
    assert s.debounce_s("file:///a.py") == 0.0


def test_request_intervals_are_tracked_per_document():
    s = scheduler()
    for _ in range(5):
        s._note_request("file:///a.py")
    assert s._timing["file:///a.py"].interval_ms < 400.0  # back-to-back requests
    assert "file:///b.py" not in s._timing
