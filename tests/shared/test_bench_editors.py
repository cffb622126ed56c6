"""``lsp-coder bench editors`` end to end on the tiny model: editors typing on one shared
server, the server killed halfway, and what the bench reports of it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import lsp_coder
from lsp_coder.bench.editors import bench_editors
from lsp_coder.bench.editors_report import report_editors

SOURCES = [Path(lsp_coder.__file__).parent / name
           for name in ("config/sections.py", "model_files.py")]


def test_two_editors_on_a_killed_shared_server_get_every_answer(tiny_qwen, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv("LSP_CODER_RUNTIME_DIR", str(tmp_path / "unused"))  # the bench sets its own
    monkeypatch.setenv("LSP_CODER_IDLE_EXIT_S", "0")
    options = {"model": {"path": str(tiny_qwen), "draft_path": "none"},
               # a random model is sure of nothing: min_confidence 0 shows its answers
               "completion": {"debounce_ms": 0, "inline_budget_ms": 0, "max_tokens": 8,
                              "min_confidence": 0.0},
               "idle": {"cold_prompt_ms": 0}, "context": {"ignore_files": False}}
    runs = asyncio.run(bench_editors(SOURCES, [2], ["shared"], options, lines=1, key_ms=0.0,
                                     kill=True, out=tmp_path / "out"))
    typed, killed = runs
    assert not typed.kill and killed.kill["killed_pids"]
    for run in runs:
        assert run.unanswered == 0 and run.answered == len(run.latencies_ms) > 0
        assert run.rss_peak_bytes > 0
    assert killed.kill["suggestions_back_s"] is not None  # the new server answered
    prompt, reused = typed.second_tokens
    assert prompt > 0 and reused == prompt  # the second window read the first one's KV
    report = report_editors(runs)
    assert "server killed; 0 requests unanswered" in report
    assert (tmp_path / "out" / "editors.json").is_file()
