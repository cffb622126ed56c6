"""A new other-files section is read by idle work while requests keep the one the cache holds."""

from __future__ import annotations

from pathlib import Path

from lsp_coder.completion.next_prompts import NextPrompt
from lsp_coder.completion.records import Suggestion
from lsp_coder.completion.service import CompletionRequest, CompletionService
from lsp_coder.config import Config, apply

CORE = ('class Engine:\n    """Runs jobs."""\n\n    def __init__(self, name: str) -> None:\n'
        "        self.name = name\n\n\n"
        "def helper(value: int, scale: float = 1.0) -> float:\n"
        '    """Scales a value."""\n    return value * scale\n')
BODY = "".join(f"total_{i:03} = add(total, {i})\n" for i in range(120))
BEFORE = ("from pkg.core import Engine, helper\n\n" + BODY
          + '\n\ndef main():\n    engine = Engine("x")\n    ')
"""The cursor's lines use ``Engine``: the section shows its definition."""
AFTER = BEFORE + "value = helper("
"""A line that uses ``helper`` too: the section adds its definition."""


def make_service(model: Path, tmp_path: Path) -> tuple[CompletionService, str, str]:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    app = root / "pkg" / "app.py"
    app.write_text(BEFORE)
    config = apply(Config(), {"model": {"path": str(model), "n_ctx": 4096, "n_seq_max": 4},
                              "completion": {"max_tokens": 4},
                              "context": {"workspace": False, "open_files": False}}, "test")
    service = CompletionService(config)
    assert service.load() is None
    service.workspace_folders([root.as_uri()])
    # 10 ms a prompt token, as on a 2-core CPU: 150 tokens are read within the default
    # idle.cold_prompt_ms (1.5 s), the file's 1,500 are not.
    service.backend.engine.costs.prefill_token_ms = 10.0
    return service, app.as_uri(), str(app)


def read_full(service: CompletionService, uri: str, path: str, text: str) -> None:
    """Idle work reads the full prompt at the end of ``text``."""
    job = NextPrompt("full", uri, path, text, len(text))
    result = service.prefill(job, job.state(), lambda: False)
    assert result is not None and result.outcome == "done"


def ask(service: CompletionService, uri: str, text: str) -> Suggestion:
    """A request at the end of ``text``."""
    return service.complete(CompletionRequest(uri=uri, text=text, offset=len(text)))


def read_and_ask(service: CompletionService, uri: str, path: str, text: str) -> Suggestion:
    """A request at the end of ``text`` after idle work read its full prompt: the section
    it reads is the document's last."""
    read_full(service, uri, path, text)
    return ask(service, uri, text)


def test_a_new_section_waits_for_idle_work_while_the_cache_holds_the_last_one(tiny_qwen,
                                                                            tmp_path):
    service, uri, path = make_service(tiny_qwen, tmp_path)
    try:
        first = read_and_ask(service, uri, path, BEFORE)
        assert not first.stats.short_prompt and first.stats.evaluated_tokens <= 2

        # The line now names helper: its definition joins the section, after Engine's. The
        # prompt with it lacks the rest of the section and the whole file (1,400 tokens,
        # 14 s here); the one with the last section lacks the new line's few tokens.
        held = ask(service, uri, AFTER)
        assert held.stats.held_section and held.stats.short_prompt  # idle work reads the full
        assert held.stats.evaluated_tokens <= 12
        assert held.stats.prompt_tokens < first.stats.prompt_tokens + 12

        # Idle work reads the prompt with the new section; the next request reads it.
        fresh = read_and_ask(service, uri, path, AFTER)
        assert not fresh.stats.held_section and not fresh.stats.short_prompt
        assert fresh.stats.evaluated_tokens <= 2
        assert fresh.stats.prompt_tokens > held.stats.prompt_tokens + 20  # helper's definition
    finally:
        service.close()


def test_the_new_section_is_read_at_once_where_it_is_read_in_time(tiny_qwen, tmp_path):
    # At 0.1 ms a prompt token the whole prompt with the new section is read within
    # idle.cold_prompt_ms: nothing is held.
    service, uri, path = make_service(tiny_qwen, tmp_path)
    try:
        first = read_and_ask(service, uri, path, BEFORE)
        service.backend.engine.costs.prefill_token_ms = 0.1
        after = ask(service, uri, AFTER)
        assert not after.stats.held_section and not after.stats.short_prompt
        assert after.stats.prompt_tokens > first.stats.prompt_tokens + 20
    finally:
        service.close()


def test_a_document_reopened_holds_no_section(tiny_qwen, tmp_path):
    service, uri, path = make_service(tiny_qwen, tmp_path)
    try:
        read_and_ask(service, uri, path, BEFORE)
        service.forget(uri)
        after = ask(service, uri, AFTER)
        assert not after.stats.held_section
    finally:
        service.close()
