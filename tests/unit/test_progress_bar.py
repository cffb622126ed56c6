"""The model load's progress on stderr: a bar in a terminal, plain lines in a log."""

from __future__ import annotations

import io

from lsp_coder.tools.progress_bar import LoadBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def reports(bar: LoadBar) -> None:
    with bar:
        for percent, label in ((0, ""), (8, "loading big.gguf"), (34, "loading big.gguf"),
                               (55, ""), (75, "loading draft.gguf"), (100, "loading draft.gguf")):
            bar.update(percent, label)


def test_a_log_gets_one_line_for_each_thing_the_load_does_and_its_end():
    log = io.StringIO()
    reports(LoadBar(stream=log))
    assert log.getvalue().splitlines() == [
        "lsp-coder: loading model: 0%",
        "lsp-coder: loading big.gguf: 8%",
        "lsp-coder: loading draft.gguf: 75%",
        "lsp-coder: loading draft.gguf: 100%",
    ]


def test_a_terminal_gets_a_bar_redrawn_in_place():
    terminal = Terminal()
    reports(LoadBar(stream=terminal))
    drawn = terminal.getvalue()
    assert "\r" in drawn and "100%|" in drawn and "loading draft.gguf" in drawn
