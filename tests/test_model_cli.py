"""``lsp-coder model list|pull|use`` as a person runs them, against the stand-in hub."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from tests.conftest import server_env
from tests.fixtures.fake_hub import FakeHub

REPO = "someone/TinyCode-GGUF"
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"


@pytest.fixture
def hub(tiny_codellama, tiny_codellama_draft):
    fake = FakeHub().start()
    fake.add_file(REPO, COMMIT, "code.Q8_0.gguf", tiny_codellama)
    fake.add_file(REPO, COMMIT, "draft.Q8_0.gguf", tiny_codellama_draft)
    yield fake
    fake.stop()


@pytest.fixture
def env(hub, tmp_path):
    return server_env(HF_ENDPOINT=hub.url, LSP_CODER_CACHE=str(tmp_path / "cache"),
                      XDG_CONFIG_HOME=str(tmp_path / "config"), HF_HUB_DISABLE_PROGRESS_BARS="1")


def run(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lsp_coder", *args], capture_output=True,
                          text=True, timeout=600, env=env)


USER_CONFIG = """\
# my settings: keep them
[completion]
debounce_ms = 50  # I type fast

[model]
# a small cache for this laptop
n_ctx = 1024
n_seq_max = 2

[speculative]
draft_model = true  # load the draft even where it does not pay
"""


def test_use_pulls_writes_the_user_config_and_the_model_then_completes(hub, env, tmp_path,
                                                                       tiny_codellama):
    config = tmp_path / "config" / "lsp-coder" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(USER_CONFIG)
    result = run(env, "model", "use", f"{REPO}/code.Q8_0.gguf@{COMMIT}",
                 "--draft", f"{REPO}/draft.Q8_0.gguf")
    assert result.returncode == 0, result.stderr
    text = config.read_text()
    # The user's comments and settings are where they were; only the model's paths are new.
    for line in USER_CONFIG.splitlines():
        assert line in text
    model = tomllib.loads(text)["model"]
    assert model["path"].endswith("someone--TinyCode-GGUF/code.Q8_0.gguf")
    assert model["draft_path"].endswith("someone--TinyCode-GGUF/draft.Q8_0.gguf")
    with open(model["path"], "rb") as pulled:
        assert pulled.read() == tiny_codellama.read_bytes()

    source = tmp_path / "add.py"
    source.write_text("def add(a, b):\n    \n\nprint(add(1, 2))\n")
    done = run(env, "complete", f"{source}:2:5")  # the config above, found where XDG says
    assert done.returncode == 0, done.stderr
    # The load's last stage reads the draft, after the target: 100 % means both loaded.
    assert "loading draft.Q8_0.gguf: 100%" in done.stderr
    assert " generated, stop: " in done.stderr

    again = run(env, "model", "use", "default")
    assert again.returncode == 0, again.stderr
    model = tomllib.loads(config.read_text())["model"]
    assert "path" not in model and "draft_path" not in model and model["n_ctx"] == 1024


def test_pull_twice_downloads_once_and_list_shows_the_presets(hub, env):
    spec = f"{REPO}/code.Q8_0.gguf"
    assert run(env, "model", "pull", spec).returncode == 0
    assert run(env, "model", "pull", spec).returncode == 0
    assert len(hub.gets()) == 1
    listed = run(env, "model", "list")
    assert listed.returncode == 0
    for name in ("default", "qwen2.5-coder-7b", "qwen2.5-coder-14b", "codellama-7b"):
        assert f"\n{name} " in listed.stdout


@pytest.mark.parametrize("args, message", [
    (("model", "use", "qwen-9000"), "unknown model 'qwen-9000': use a preset (qwen2.5-coder-0.5b"),
    (("model", "pull", f"{REPO}/missing.gguf"), f"{REPO} has no file missing.gguf at main"),
    (("model", "pull", "nobody/None-GGUF/x.gguf"), "no model repository nobody/None-GGUF"),
])
def test_a_name_that_cannot_be_pulled_fails_with_why(env, args, message):
    result = run(env, *args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_offline_mode_is_honoured_by_the_command(hub, env):
    result = run(env | {"HF_HUB_OFFLINE": "1"}, "model", "pull", f"{REPO}/code.Q8_0.gguf")
    assert result.returncode == 1 and "offline mode is on (HF_HUB_OFFLINE)" in result.stderr
    assert hub.requests == []
