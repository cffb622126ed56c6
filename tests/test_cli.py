"""The commands people run: complete, doctor, try and bench, as subprocesses."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_coder.bench.options import server_options
from tests.conftest import server_env


def run(*args: str, config=None, timeout: float = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "lsp_coder"] + (["--config", str(config)] if config else [])
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=timeout,
                          env=server_env())


def bench(name: str, model: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    """``lsp-coder bench NAME ARGS`` on ``model`` alone (no draft), four tokens an answer, its
    files written to ``out``."""
    return run("bench", name, *args, "--model", str(model), "--draft", "none",
               "--max-tokens", "4", "--out", str(out))


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
    assert f"batch costs of {tiny_codellama.name} " in out
    # The load's progress (stderr, a pipe here: plain lines) names the weights it reads and
    # reaches 100 %.
    assert f"lsp-coder: loading {tiny_codellama.name}: 100%\n" in result.stderr, result.stderr


@pytest.mark.real_model
def test_try_types_into_the_real_server_and_shows_suggestions(tmp_path, real_small_model):
    result = run("try", "--lines", "1", config=config_for(tmp_path, real_small_model))
    assert result.returncode == 0, result.stderr
    assert "suggestions shown" in result.stdout
    assert " ms  after " in result.stdout  # at least one suggestion with its latency
    # The server's $/progress drives the progress lines: they name the weights read and reach
    # 100 %.
    assert f"lsp-coder: loading {real_small_model.name}: 100%\n" in result.stderr, result.stderr


def forty_functions(folder: Path) -> Path:
    """A Python file of forty small functions in ``folder``: what the benches type in."""
    source = folder / "code.py"
    source.write_text("".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40)))
    return source


def test_bench_prints_the_table_and_writes_the_plot(tmp_path, tiny_qwen):
    source = forty_functions(tmp_path)
    result = bench("typing", tiny_qwen, tmp_path / "out", str(source), "--lines", "1",
                   "--naive-keys", "2", "--key-ms", "0")
    assert result.returncode == 0, result.stderr
    for label in ("cold latency", "warm p50", "prompt tokens reused", "tokens evaluated / key",
                  "server RSS", "decode tokens / s"):
        assert label in result.stdout
    assert "naive" in result.stdout and "nospec" in result.stdout
    assert (tmp_path / "out" / "latency.png").stat().st_size > 1000
    assert (tmp_path / "out" / "bench.json").is_file()


def test_bench_soak_types_like_an_editor_and_samples_memory(tmp_path, tiny_qwen):
    source = forty_functions(tmp_path)
    result = bench("soak", tiny_qwen, tmp_path / "out", "--keys", "60", "--every", "20",
                   str(source), "--lines", "2", "--key-ms", "5")
    assert result.returncode == 0, result.stderr
    assert "soak: 60 keys in" in result.stdout and ", 0 failed;" in result.stdout
    samples = json.loads((tmp_path / "out" / "soak.json").read_text())["samples"]
    assert [s["keys"] for s in samples] == [0, 20, 40, 60]
    assert all(s["rss_mib"] > 0 for s in samples)


def test_bench_burst_types_keys_the_client_cancels(tmp_path, tiny_qwen):
    source = forty_functions(tmp_path)
    result = bench("burst", tiny_qwen, tmp_path / "out", str(source), "--chars", "6",
                   "--key-ms", "5", "--open-pause-ms", "0")
    assert result.returncode == 0, result.stderr
    assert "burst: 1 files, cancelling at each key: last key -> answer p50" in result.stdout
    burst = json.loads((tmp_path / "out" / "burst.json").read_text())
    (row,) = burst["rows"]
    assert row["file"] == "code.py" and row["keys"] == 6 and row["evaluated_tokens"] > 0


def test_bench_idle_compares_idle_work_off_and_on(tmp_path, tiny_qwen):
    source = forty_functions(tmp_path)
    result = bench("idle", tiny_qwen, tmp_path / "out", str(source), "--lines", "2",
                   "--key-ms", "5", "--line-pause-ms", "400", "--read-ms", "50",
                   "--open-pause-ms", "400", "--cold-context", "0", "--cold-context-first",
                   "--min-confidence", "1")
    assert result.returncode == 0, result.stderr
    for label in ("open", "enter", "mid", "prompt tokens from the cache", "idle tokens evaluated",
                  "answers hidden as unsure", "+cold prompt: of "):
        assert label in result.stdout
    runs = json.loads((tmp_path / "out" / "idle.json").read_text())
    assert runs["idle off"]["idle_evaluated"] == 0
    assert runs["idle on"]["idle_evaluated"] > 0
    assert list(runs) == ["idle off", "idle on", "+cold prompt", "+cold, section first",
                          "+cold, section 0", "+cold, min_confidence 1"]
    # The random model is seldom sure: answers to typing are hidden at 1 and at the default
    # 0.5, and the bench's table, which counts the hidden answers too, judges as the server.
    assert runs["+cold, min_confidence 1"]["unsure"] > 0
    default = runs["+cold prompt"]
    assert default["unsure"] > 0 and default["hiding"]["known"] > 0
    assert default["hiding"]["0.5"]["hidden"] == default["unsure"]


def test_bench_documents_reports_the_event_loop_blocks(tmp_path, tiny_qwen):
    result = bench("documents", tiny_qwen, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "longest block:" in result.stdout
    rows = json.loads((tmp_path / "out" / "documents.json").read_text())
    assert len(rows) == 14
    assert all("loop_block_max_ms" in row and "loop_busy_max_ms" in row for row in rows)
    assert "long line per key:" in result.stdout
    typing = json.loads((tmp_path / "out" / "documents-typing.json").read_text())
    assert [len(row["per_key_ms"]) for row in typing["rows"]] == [5, 5] and typing["ratio"] > 0


def test_bench_workspace_reports_the_index_memory_and_keys(tmp_path, tiny_qwen):
    result = bench("workspace", tiny_qwen, tmp_path / "out", "--workspace-files", "60")
    assert result.returncode == 0, result.stderr
    for label in ("index: ", "server memory after the keys", "keys that reached the model",
                  "event loop's longest block"):
        assert label in result.stdout
    raw = json.loads((tmp_path / "out" / "workspace.json").read_text())
    summary = raw["summary"]
    assert summary["files"] == 60 and 0 < summary["indexed_files"] <= 60
    assert summary["definitions"] > 0 and summary["index_build_ms"] > 0
    base, loaded = raw["runs"]
    assert len(base["keys"]) == len(loaded["keys"]) > 0
    assert not any(k["while_indexing"] for k in base["keys"])
    assert loaded["index_ready_s"] > 0 and loaded["rss_after_mb"] > 0


def test_bench_time_box_sets_the_inline_budget_of_every_run():
    args = argparse.Namespace(model=None, draft=None, max_tokens=24, time_box=0)
    assert server_options(args)["completion"]["inline_budget_ms"] == 0
    args.time_box = 1500
    assert server_options(args, idle={"enabled": False})["completion"]["inline_budget_ms"] == 1500


def test_bench_editor_options_keep_the_products_debounce_time_box_and_prompts():
    args = argparse.Namespace(model=None, draft=None, max_tokens=24, time_box=0,
                              settings=["completion.debounce_ms=50"])
    options = server_options(args, editor=True)
    assert options["completion"] == {"max_tokens": 24, "debounce_ms": 50}
    assert options["idle"] == {}
    args.time_box = 900
    assert server_options(args, editor=True)["completion"]["inline_budget_ms"] == 900


def test_bench_set_puts_a_setting_over_every_run_and_refuses_what_the_server_would():
    args = argparse.Namespace(model=None, draft=None, max_tokens=24, time_box=0,
                              settings=["completion.recent_lines=0", "idle.enabled = false",
                                        "completion.fim_layout=spm"])
    options = server_options(args, idle={"enabled": True, "cold_prompt_ms": 1500})
    assert options["completion"]["recent_lines"] == 0
    assert options["idle"] == {"enabled": False, "cold_prompt_ms": 1500}
    assert options["completion"]["fim_layout"] == "spm"
    for bad in ("completion.recent_lines=65", "recent_lines=0", "completion.no_such=1"):
        result = run("bench", "typing", "--set", bad)
        assert result.returncode == 2 and f"--set {bad}" in result.stderr


def _package(root):
    pkg = root / "shapes"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "units.py").write_text("SCALE = 3\n\n\ndef scaled(value, factor):\n"
                                  "    return value * factor * SCALE\n")
    for i in range(3):
        (pkg / f"shape{i}.py").write_text(
            f"from .units import scaled\n\n\ndef area{i}(w, h):\n    side = w + {i}\n"
            f"    total = scaled(side * h, {i})\n    return total\n")
    return pkg


def test_bench_crossfile_compares_context_sources_on_blanked_lines(tmp_path, tiny_qwen):
    pkg = _package(tmp_path)
    result = bench("crossfile", tiny_qwen, tmp_path / "out", str(pkg), "--cases", "2",
                   "--sources", "in-file,all", "--open-pause-ms", "0", "--tabs", "1",
                   "--highlight")
    assert result.returncode == 0, result.stderr
    assert "2 of 3 cases from" in result.stdout
    assert "all vs in-file: exact " in result.stdout
    raw = json.loads((tmp_path / "out" / "crossfile.json").read_text())
    assert all(c["expected"].startswith("total = scaled(side * h, ") for c in raw["cases"])
    assert all(c["tabs"][0] == "shapes/units.py" for c in raw["cases"])
    for name in ("in-file", "all"):
        answers = raw["answers"][name]
        assert len(answers) == 2 and all(a["prompt_tokens"] > 0 for a in answers)
    assert (tmp_path / "out" / "crossfile.png").stat().st_size > 1000
    # the package itself is untouched: the blanked buffers live in temporary copies
    assert "total = scaled(side * h, 0)" in (pkg / "shape0.py").read_text()


def test_bench_crossfile_visit_rests_on_the_definition_and_visited_runs_show_it(tmp_path,
                                                                                 tiny_qwen):
    """--visit: the client rests on the name's definition before the case's file; only the
    +visited run, whose server keeps visited ranges, has it in the prompt (no section)."""
    pkg = _package(tmp_path)
    result = bench("crossfile", tiny_qwen, tmp_path / "out", str(pkg), "--cases", "2",
                   "--alone", "--visit", "--sources", "in-file+full,in-file+full+visited",
                   "--open-pause-ms", "0")
    assert result.returncode == 0, result.stderr
    raw = json.loads((tmp_path / "out" / "crossfile.json").read_text())
    for plain, visited in zip(raw["answers"]["in-file+full"],
                              raw["answers"]["in-file+full+visited"]):
        assert visited["prompt_tokens"] > plain["prompt_tokens"] > 0


def test_bench_crossfile_cceval_recipe_in_python_and_typescript_with_the_oracle(tmp_path,
                                                                                tiny_qwen):
    """--recipe cceval on a Python and a TypeScript package: per-language tables with
    identifier match and paired intervals; +oracle pins the definition on top of the
    section (a longer prompt than the same run without it)."""
    pkg = _package(tmp_path)
    web = tmp_path / "web"
    (web / "src").mkdir(parents=True)
    (web / "package.json").write_text('{"name": "web"}')
    (web / "src" / "units.ts").write_text(
        "export function scaled(value: number, factor: number): number {\n"
        "  return value * factor\n}\n")
    for i in range(3):
        (web / "src" / f"shape{i}.ts").write_text(
            f"import {{ scaled }} from './units'\n\nexport function area{i}(w: number) {{\n"
            f"  const side = w + {i}\n  const total = scaled(side, {i})\n  return total\n}}\n")
    result = bench("crossfile", tiny_qwen, tmp_path / "out", str(pkg), str(web),
                   "--recipe", "cceval", "--cases", "2", "--sources", "in-file,all,all+oracle",
                   "--open-pause-ms", "0", "--alone")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "python, 2 cases (95 % intervals" in out and "typescript, 2 cases" in out
    for head in ("exact", "edit sim", "id exact", "id F1", "names it"):
        assert head in out.split("python, 2 cases", 1)[1]
    assert out.count("\n  all+oracle vs in-file: exact ") == 2 and "; exact x" in out
    raw = json.loads((tmp_path / "out" / "crossfile.json").read_text())
    assert [c["expected"][:8] for c in raw["cases"]] == ["scaled(s"] * 4
    assert [c["language"] for c in raw["cases"]] == ["python", "typescript"] * 2
    for plain, pinned in zip(raw["answers"]["all"], raw["answers"]["all+oracle"]):
        assert pinned["prompt_tokens"] > plain["prompt_tokens"] > 0
        assert 0 <= pinned["identifier_f1"] <= 100
    # Each answer carries the model's probability of each generated token, and the tables of
    # what that confidence tells follow the language tables.
    for answer in raw["answers"]["in-file"]:
        assert all(0 < p <= 1 for p in answer["token_probs"]) and answer["token_probs"]
    assert "all only where in-file is unsure (4 cases;" in out
    # The same cases again from the JSON, drawn by its recipe without --recipe: the same
    # lines, and the same answers (greedy decoding, the same prompts).
    again = bench("crossfile", tiny_qwen, tmp_path / "again", "--cases-from",
                  str(tmp_path / "out" / "crossfile.json"), "--sources", "in-file",
                  "--open-pause-ms", "0", "--alone")
    assert again.returncode == 0, again.stderr
    redone = json.loads((tmp_path / "again" / "crossfile.json").read_text())
    assert (redone["recipe"], raw["recipe"]) == ("cceval", "cceval")
    assert redone["cases"] == raw["cases"]
    assert ([a["suggestion"] for a in redone["answers"]["in-file"]]
            == [a["suggestion"] for a in raw["answers"]["in-file"]])
    # A run stopped after its first case goes on from the second: the first keeps the
    # answer the stopped run wrote, the rest are asked.
    stopped = dict(redone, cases=redone["cases"][:1],
                   answers={"in-file": [dict(redone["answers"]["in-file"][0],
                                             suggestion="kept as answered")]})
    (tmp_path / "stopped.json").write_text(json.dumps(stopped))
    going_on = bench("crossfile", tiny_qwen, tmp_path / "resumed", "--resume",
                     str(tmp_path / "stopped.json"), "--cases", "2", "--sources", "in-file",
                     "--open-pause-ms", "0", "--alone")
    assert going_on.returncode == 0, going_on.stderr
    assert "  1/4 in-file" not in going_on.stdout and "  2/4 in-file" in going_on.stdout
    finished = json.loads((tmp_path / "resumed" / "crossfile.json").read_text())
    assert finished["cases"] == raw["cases"]
    assert ([a["suggestion"] for a in finished["answers"]["in-file"]]
            == ["kept as answered"] + [a["suggestion"] for a in raw["answers"]["in-file"][1:]])
    # Runs summarized together (other seeds): their cases pooled, one both drew counted once;
    # runs of another recipe refused with the reason.
    both = run("bench", "crossfile", "--summarize", str(tmp_path / "stopped.json"),
               str(tmp_path / "resumed" / "crossfile.json"))
    assert both.returncode == 0, both.stderr
    assert (f"2 runs pooled (seeds {raw['seed']}, {raw['seed']}, recipe cceval):"
            f" {len(raw['cases'])} cases, 1 drawn again counted once") in both.stdout
    (tmp_path / "blank.json").write_text(json.dumps(dict(stopped, recipe="blank")))
    mixed = run("bench", "crossfile", "--summarize", str(tmp_path / "stopped.json"),
                str(tmp_path / "blank.json"))
    assert mixed.returncode == 2 and "recipes do not pool: blank, cceval" in mixed.stderr
    # --missed-by: only the cases a filter run on them missed (here it got the first one).
    (tmp_path / "filter.json").write_text(json.dumps(dict(
        finished, answers={"in-file+full": [dict(a, exact=i == 0) for i, a in
                                            enumerate(finished["answers"]["in-file"])]})))
    filtered = run("bench", "crossfile", "--summarize", str(tmp_path / "stopped.json"),
                   str(tmp_path / "resumed" / "crossfile.json"),
                   "--missed-by", str(tmp_path / "filter.json"))
    assert filtered.returncode == 0, filtered.stderr
    assert (f"{len(raw['cases']) - 1} of {len(raw['cases'])} cases kept, those the filter run"
            " missed with the file alone (1 it got exactly left out)") in filtered.stdout
    alone = run("bench", "crossfile", "--missed-by", str(tmp_path / "filter.json"))
    assert alone.returncode == 2 and "--summarize" in alone.stderr
    # --languages given draws only the cases in those languages, from FILES too.
    typescript = bench("crossfile", tiny_qwen, tmp_path / "ts", str(pkg), str(web),
                       "--recipe", "cceval", "--languages", "ts", "--cases", "2",
                       "--sources", "in-file", "--open-pause-ms", "0", "--alone")
    assert typescript.returncode == 0, typescript.stderr
    drawn = json.loads((tmp_path / "ts" / "crossfile.json").read_text())["cases"]
    assert [c["language"] for c in drawn] == ["typescript"] * 2
    unknown = run("bench", "crossfile", str(pkg), "--languages", "python,java",
                  "--out", str(tmp_path / "java"))
    assert unknown.returncode == 2 and "'java' is not one of python, js, ts" in unknown.stderr


@pytest.mark.real_model
def test_bench_crossfile_filter_keeps_the_cases_the_filter_model_misses(tmp_path, tiny_qwen,
                                                                        real_small_model):
    """--filter-model: a line the file repeats five times is left out (the 0.5B gets it from
    the file alone); a line nothing in the file shows is kept."""
    pkg = tmp_path / "calc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "units.py").write_text("def scaled(value, factor):\n    return value * factor\n")
    (pkg / "easy.py").write_text("from .units import scaled\n\n" + "".join(
        f"\ndef area{i}(w, h):\n    total = scaled(w * h, 2)\n    return total\n\n"
        for i in range(6)))
    (pkg / "odd.py").write_text("from .units import scaled\n\n\ndef odd(w, h):\n"
                                "    q = scaled(h - 7 * w, 41) ** 3 % 17\n    return q\n")
    result = run("bench", "crossfile", str(pkg), "--cases", "5", "--per-file", "1",
                 "--sources", "in-file", "--alone", "--open-pause-ms", "0",
                 "--filter-model", str(real_small_model), "--model", str(tiny_qwen),
                 "--draft", "none", "--max-tokens", "24", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "= (left out)" in result.stdout and "x (kept)" in result.stdout, result.stdout
    raw = json.loads((tmp_path / "out" / "crossfile.json").read_text())
    assert [c["path"] for c in raw["cases"]] == ["calc/odd.py"]
    assert raw["filter"].startswith("1 of 2 asked")


def test_bench_floor_compares_the_plain_prompt_and_the_server(tmp_path, tiny_qwen):
    files = []
    for suffix, line in ((".py", "    total = value + offset * {i}\n"),
                         (".js", "  const total = value + offset * {i};\n"),
                         (".c", "    int total = value + offset * {i};\n")):
        path = tmp_path / f"code{suffix}"
        path.write_text("".join(line.format(i=i) for i in range(80)))
        files.append(str(path))
    result = bench("floor", tiny_qwen, tmp_path / "out", *files, "--items", "1",
                   "--open-pause-ms", "20")
    assert result.returncode == 0, result.stderr
    assert "3 spans (python 1, javascript 1, c 1)" in result.stdout
    raw = json.loads((tmp_path / "out" / "floor.json").read_text())
    assert raw["open_pause_ms"] == 20
    assert set(raw["answers"]) == {"plain", "server", "server, full prompt"}
    assert all(len(a) == 3 for a in raw["answers"].values())
    assert set(raw["summaries"]["plain"]) == {"python", "javascript", "c", "total"}
    assert (tmp_path / "out" / "floor.png").stat().st_size > 1000
