"""The commands people run: complete, doctor, try and bench, as subprocesses."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from lsp_coder.bench.replay import _options
from tests.conftest import server_env


def run(*args: str, config=None, timeout: float = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "lsp_coder"] + (["--config", str(config)] if config else [])
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=timeout,
                          env=server_env())


def config_for(tmp_path, model, **completion):
    lines = [f'[model]\npath = "{model}"\ndraft_path = "none"\nn_ctx = 2048\n', "[completion]"]
    lines += [f"{k} = {v}" for k, v in completion.items()]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.real_model
def test_complete_prints_the_completion_at_a_point(tmp_path, real_small_model):
    source = tmp_path / "add.py"
    source.write_text("def add(a, b):\n    \n\nprint(add(1, 2))\n")
    result = run("complete", f"{source}:2:5", config=config_for(tmp_path, real_small_model))
    assert result.returncode == 0, result.stderr
    assert "return a + b" in result.stdout


def test_complete_rejects_a_bad_location(tmp_path, tiny_qwen):
    result = run("complete", "no-colons-here", config=config_for(tmp_path, tiny_qwen))
    assert result.returncode == 2 and "FILE:LINE:COL" in result.stderr


def test_a_bad_config_file_names_the_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[completion]\nmax_tokens = 'many'\n")
    result = run("doctor", config=path)
    assert result.returncode == 2 and "max_tokens" in result.stderr


def test_doctor_reports_model_template_memory_and_safety(tmp_path, tiny_codellama):
    result = run("doctor", config=config_for(tmp_path, tiny_codellama))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "▁<PRE>" in out and "▁<SUF>" in out and "▁<MID>" in out
    assert "prefix-suffix-middle layout (completion.fim_layout = auto)" in out
    assert "memory" in out and "KV" in out and "compute" in out
    assert "AMX kernels" in out and "status      ok" in out
    # The load's progress bar (tqdm, on stderr) names the weights it reads and reaches 100 %.
    assert f"lsp-coder: loading {tiny_codellama.name}: 100%|" in result.stderr, result.stderr


@pytest.mark.real_model
def test_try_types_into_the_real_server_and_shows_suggestions(tmp_path, real_small_model):
    result = run("try", "--lines", "1", config=config_for(tmp_path, real_small_model))
    assert result.returncode == 0, result.stderr
    assert "suggestions shown" in result.stdout
    assert " ms  after " in result.stdout  # at least one suggestion with its latency
    # The server's $/progress drives the bar: it names the weights read and reaches 100 %.
    assert f"lsp-coder: loading {real_small_model.name}: 100%|" in result.stderr, result.stderr


def test_bench_prints_the_table_and_writes_the_plot(tmp_path, tiny_qwen):
    source = tmp_path / "code.py"
    source.write_text("".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40)))
    result = run("bench", str(source), "--model", str(tiny_qwen), "--draft", "none",
                 "--lines", "1", "--naive-keys", "2", "--key-ms", "0", "--max-tokens", "4",
                 "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    for label in ("cold latency", "warm p50", "prompt tokens reused", "tokens evaluated / key",
                  "server RSS", "decode tokens / s"):
        assert label in result.stdout
    assert "naive" in result.stdout and "nospec" in result.stdout
    assert (tmp_path / "out" / "latency.png").stat().st_size > 1000
    assert (tmp_path / "out" / "bench.json").is_file()


def test_bench_soak_types_like_an_editor_and_samples_memory(tmp_path, tiny_qwen):
    source = tmp_path / "code.py"
    source.write_text("".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40)))
    result = run("bench", "--soak", "60", "--soak-every", "20", str(source), "--model",
                 str(tiny_qwen), "--draft", "none", "--lines", "2", "--key-ms", "5",
                 "--max-tokens", "4", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "soak: 60 keys in" in result.stdout and ", 0 failed;" in result.stdout
    samples = json.loads((tmp_path / "out" / "soak.json").read_text())["samples"]
    assert [s["keys"] for s in samples] == [0, 20, 40, 60]
    assert all(s["rss_mib"] > 0 for s in samples)


def test_bench_idle_compares_idle_work_off_and_on(tmp_path, tiny_qwen):
    source = tmp_path / "code.py"
    source.write_text("".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40)))
    result = run("bench", "--idle", str(source), "--model", str(tiny_qwen), "--draft", "none",
                 "--lines", "2", "--key-ms", "5", "--line-pause-ms", "400", "--read-ms", "50",
                 "--open-pause-ms", "400", "--max-tokens", "4", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    for label in ("open", "enter", "mid", "prompt tokens from the cache", "idle tokens evaluated"):
        assert label in result.stdout
    runs = json.loads((tmp_path / "out" / "idle.json").read_text())
    assert runs["idle off"]["idle_evaluated"] == 0
    assert runs["idle on"]["idle_evaluated"] > 0


def test_bench_documents_reports_the_event_loop_blocks(tmp_path, tiny_qwen):
    result = run("bench", "--documents", "--model", str(tiny_qwen), "--draft", "none",
                 "--max-tokens", "4", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "longest block:" in result.stdout
    rows = json.loads((tmp_path / "out" / "documents.json").read_text())
    assert len(rows) == 14
    assert all("loop_block_max_ms" in row and "loop_busy_max_ms" in row for row in rows)
    assert "long line per key:" in result.stdout
    typing = json.loads((tmp_path / "out" / "documents-typing.json").read_text())
    assert [len(row["per_key_ms"]) for row in typing["rows"]] == [5, 5] and typing["ratio"] > 0


def test_bench_time_box_sets_the_inline_budget_of_every_run():
    args = argparse.Namespace(model=None, draft=None, max_tokens=24, time_box=0)
    assert _options(args)["completion"]["inline_budget_ms"] == 0
    args.time_box = 1500
    assert _options(args, idle={"enabled": False})["completion"]["inline_budget_ms"] == 1500
