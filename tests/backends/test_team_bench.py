"""``lsp-coder bench --backend URL --editors N`` against a real llama-server."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import server_env


def test_team_bench_types_both_clients_and_writes_the_table(llama_server, tmp_path):
    source = tmp_path / "shapes.py"
    source.write_text("".join(f"def area_{i}(w, h):\n    return w * h * {i}\n\n"
                              for i in range(30)))
    result = subprocess.run(
        [sys.executable, "-m", "lsp_coder", "bench", "team", str(source),
         "--backend", llama_server.url, "--editors", "1", "--lines", "1", "--key-ms", "20",
         "--pause-ms", "300",
         "--max-tokens", "4", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600, env=server_env())
    assert result.returncode == 0, result.stderr
    assert "| 1 | lsp-coder |" in result.stdout and "| 1 | llama.vim-style |" in result.stdout
    runs = {r["run"]: r for r in json.loads((tmp_path / "out" / "team.json").read_text())}
    assert runs["llama.vim-style"]["requests_per_key"] == 1.0
    assert 0 < runs["lsp-coder"]["requests_per_key"] < 1.0
    assert runs["lsp-coder"]["keys"] == runs["llama.vim-style"]["keys"] > 0
