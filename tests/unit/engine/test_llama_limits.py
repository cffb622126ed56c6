"""The config's limits are llama.cpp's: what the config refuses aborts llama.cpp, and the most
extreme values it accepts load and generate (each tried in a subprocess, on a tiny model)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from lsp_coder.config import MAX_N_SEQ, MIN_N_CTX, Config, ConfigError, apply

PROBE = """
import sys
from dataclasses import replace
from pathlib import Path
from lsp_coder.config import Config
from lsp_coder.engine.engine import Engine
from lsp_coder.engine.generate_request import GenerateRequest
n_ctx, n_batch, n_ubatch, n_seq = map(int, sys.argv[2:6])
config = Config()
config = replace(config, model=replace(config.model, n_ctx=n_ctx, n_batch=n_batch,
                                       n_ubatch=n_ubatch, n_seq_max=n_seq))
engine = Engine(Path(sys.argv[1]), None, config)
prompt = engine.tokenize("def f(x):\\n    return x * 2\\n" * 8)
print("generated", engine.generate(GenerateRequest(prompt=prompt, max_tokens=4)).stop_reason)
"""


def run_engine(model, n_ctx: int, n_batch: int, n_ubatch: int, n_seq: int):
    """Build an engine with these sizes, bypassing the config's checks."""
    return subprocess.run([sys.executable, "-c", PROBE, str(model), str(n_ctx), str(n_batch),
                           str(n_ubatch), str(n_seq)], capture_output=True, timeout=300)


@pytest.mark.parametrize("sizes", [(8192, 4, 512, 8), (4, 512, 512, 8)],
                         ids=["n_batch_below_n_seq_max", "n_ctx_below_n_seq_max"])
def test_what_the_config_refuses_aborts_llama_cpp(tiny_qwen, sizes):
    n_ctx, n_batch, n_ubatch, n_seq = sizes
    with pytest.raises(ConfigError):
        apply(Config(), {"model": {"n_ctx": n_ctx, "n_batch": n_batch, "n_ubatch": n_ubatch,
                                   "n_seq_max": n_seq}}, "t")
    done = run_engine(tiny_qwen, *sizes)
    assert done.returncode < 0 and b"GGML_ASSERT" in done.stderr  # the process was killed


@pytest.mark.parametrize("sizes", [(MIN_N_CTX, 8, 8, 8), (MIN_N_CTX, MAX_N_SEQ, 32, MAX_N_SEQ)],
                         ids=["n_batch_equal_to_n_seq_max", "most_sequences"])
def test_the_most_extreme_accepted_sizes_work(tiny_qwen, sizes):
    n_ctx, n_batch, n_ubatch, n_seq = sizes
    config = apply(Config(), {"model": {"n_ctx": n_ctx, "n_batch": n_batch,
                                        "n_ubatch": n_ubatch, "n_seq_max": n_seq},
                              "completion": {"max_tokens": 4}}, "t")
    assert replace(config.model, n_ctx=n_ctx) == config.model
    done = run_engine(tiny_qwen, *sizes)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b"generated" in done.stdout


def test_more_sequences_than_llama_cpp_allows_is_refused_before_it():
    with pytest.raises(ConfigError, match="model.n_seq_max"):
        apply(Config(), {"model": {"n_seq_max": MAX_N_SEQ + 1}}, "t")
