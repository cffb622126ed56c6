"""The adaptive debounce: none when the client waits itself, shorter when answers are fast."""

from __future__ import annotations

from lsp_coder.server.debounce import Debounce

URI = "file:///a.py"


def test_first_request_of_a_document_does_not_wait():
    assert Debounce(lambda: 150.0).seconds(URI) == 0.0


def test_a_client_that_already_spaces_its_requests_pays_nothing():
    d = Debounce(lambda: 150.0)
    d.note_request(URI)
    d.timing[URI].interval_ms = 200.0  # Neovim 0.12 waits 200 ms itself
    assert d.seconds(URI) == 0.0


def test_fast_typing_waits_the_ceiling_or_half_when_answers_are_fast():
    d = Debounce(lambda: 150.0)
    d.note_request(URI)
    d.timing[URI].interval_ms = 60.0
    for _ in range(3):
        d.note_latency(900.0)
    assert d.seconds(URI) == 0.150
    for _ in range(20):
        d.note_latency(40.0)
    assert d.seconds(URI) == 0.075


def test_a_shared_serving_engine_always_waits_the_ceiling():
    d = Debounce(lambda: 150.0)
    assert d.seconds(URI, shared_engine=True) == 0.150


def test_a_zero_ceiling_turns_debounce_off():
    d = Debounce(lambda: 0.0)
    d.note_request(URI)
    d.timing[URI].interval_ms = 10.0
    assert d.seconds(URI) == 0.0
    assert d.seconds(URI, shared_engine=True) == 0.0


def test_request_intervals_are_tracked_per_document_and_forgotten_on_close():
    d = Debounce(lambda: 150.0)
    for _ in range(5):
        d.note_request(URI)
    assert d.timing[URI].interval_ms < 400.0  # back-to-back requests
    assert "file:///b.py" not in d.timing
    d.forget(URI)
    assert d.seconds(URI) == 0.0
