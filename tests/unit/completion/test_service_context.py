"""The definitions the cursor uses reach the local engine's prompt, the short one included."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lsp_coder.backends.fim_text import file_entry
from lsp_coder.completion.next_prompts import NextPrompt
from lsp_coder.completion.service import CompletionRequest, CompletionService
from lsp_coder.config import Config, apply

CORE = ('class Engine:\n    """Runs jobs."""\n\n    def __init__(self, name: str) -> None:\n'
        "        self.name = name\n\n    def start(self, when: float) -> bool:\n"
        "        return True\n")
APP = "from pkg.core import Engine\n\n\ndef main():\n    engine = Engine("


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    (root / "pkg" / "app.py").write_text(APP)
    return root


def service_for(model: Path, **layer) -> CompletionService:
    config = apply(Config(), {"model": {"path": str(model), "n_ctx": 4096, "n_seq_max": 4},
                              "completion": {"max_tokens": 4}, **layer}, "test")
    service = CompletionService(config)
    assert service.load() is None
    return service


LONG_APP = "".join(f"total_{i:03} = add(total, {i})\n" for i in range(120)) + APP
"""A file whose full prompt cannot be read in a millisecond."""


def cold_service(model: Path, root: Path, **idle) -> CompletionService:
    """A service where no prompt of more than a few tokens is read in time on a cold cache
    (1 ms), short prompts of 200 tokens, ``root`` as the workspace."""
    service = service_for(model, idle={"cold_prompt_ms": 1, "cold_prompt_tokens": 200, **idle},
                          context={"workspace": False})
    service.workspace_folders([root.as_uri()])
    return service


def test_the_prompt_holds_the_definition_in_the_models_repository_format(tiny_qwen, tmp_path):
    root = workspace(tmp_path)
    uri = (root / "pkg" / "app.py").as_uri()
    req = CompletionRequest(uri=uri, text=APP, offset=len(APP))
    prompt_tokens = {}
    for definitions in (False, True):
        service = service_for(tiny_qwen, idle={"enabled": False},
                              context={"definitions": definitions, "workspace": False})
        try:
            service.workspace_folders([root.as_uri()])
            suggestion = service.complete(req)
            prompt_tokens[definitions] = suggestion.stats.prompt_tokens
            section = service.related.section(uri, APP, len(APP), 512, service.config)
            engine = service.backend.engine
            if definitions:
                [(path, body)] = section.entries
                template = engine.template
                assert template.file_sep >= 0 and template.repo_name >= 0
                expected = (1 + len(engine.tokenize("proj\n")) + 1 + len(engine.tokenize(
                    file_entry(path, body))) + 1 + len(engine.tokenize("pkg/app.py\n")))
        finally:
            service.close()
    assert path == "pkg/core.py" and "def __init__(self, name: str) -> None:" in body
    assert "self.name = name" not in body
    assert prompt_tokens[True] - prompt_tokens[False] == expected


def test_a_cold_file_answers_first_without_the_section_then_with_it_then_in_full(tiny_qwen,
                                                                                 tmp_path):
    # Without the full prompt's front in short prompts (idle.cold_prompt_front = false), a
    # full job reads the short prompt with the section first.
    root = workspace(tmp_path)
    text = LONG_APP
    uri = (root / "pkg" / "app.py").as_uri()
    service = cold_service(tiny_qwen, root, cold_prompt_front=False)
    try:
        req = CompletionRequest(uri=uri, text=text, offset=len(text))
        first = service.complete(req)
        # The short prompt without the section: at most cold_prompt_tokens of the file.
        assert first.stats.short_prompt and first.stats.prompt_tokens <= 200 + 8
        section = service.related.section(uri, text, len(text), 512, service.config,
                                          record=False)
        assert any("def __init__(self, name: str)" in body for _, body in section.entries)
        full = NextPrompt("full", uri, str(root / "pkg" / "app.py"), text, len(text))
        step = service.prefill(full, full.state(), lambda: False)
        assert step is not None and step.outcome == "done" and step.short_prompt
        assert step.prompt_tokens > first.stats.prompt_tokens + 40  # the section first
        second = service.complete(req)  # now cached: the short prompt with the section
        assert second.stats.short_prompt and second.stats.prompt_tokens == step.prompt_tokens
        assert second.stats.evaluated_tokens <= 2
        last = service.prefill(full, full.state(), lambda: False)  # then the full prompt
        assert last is not None and last.outcome == "done" and not last.short_prompt
        third = service.complete(req)
        assert not third.stats.short_prompt and third.stats.evaluated_tokens <= 2
        assert third.stats.prompt_tokens > second.stats.prompt_tokens + 400
    finally:
        service.close()


def test_a_full_job_reads_the_full_prompt_from_its_front(tiny_qwen, tmp_path):
    # With the full prompt's front in short prompts (the default), the full job reads the
    # full prompt at once: the short prompt with the section would be read for nothing.
    root = workspace(tmp_path)
    text = LONG_APP
    uri = (root / "pkg" / "app.py").as_uri()
    service = cold_service(tiny_qwen, root)
    try:
        req = CompletionRequest(uri=uri, text=text, offset=len(text))
        first = service.complete(req)
        assert first.stats.short_prompt and first.stats.prompt_tokens <= 200 + 8
        full = NextPrompt("full", uri, str(root / "pkg" / "app.py"), text, len(text))
        step = service.prefill(full, full.state(), lambda: False)
        assert step is not None and step.outcome == "done" and not step.short_prompt
        assert step.prompt_tokens > first.stats.prompt_tokens + 400
        second = service.complete(req)
        assert not second.stats.short_prompt and second.stats.evaluated_tokens <= 2
    finally:
        service.close()


def test_the_short_prompt_keeps_only_as_much_of_the_section_as_cold_context_tokens(tiny_qwen,
                                                                                  tmp_path):
    root = workspace(tmp_path)
    text = LONG_APP
    uri = (root / "pkg" / "app.py").as_uri()
    tokens = {}
    for head in (0, 24, 512):
        service = cold_service(tiny_qwen, root, cold_context_tokens=head,
                               cold_prompt_front=False)
        try:
            if head:  # idle work reads the short prompt with that much of the section
                full = NextPrompt("full", uri, str(root / "pkg" / "app.py"), text, len(text))
                assert service.prefill(full, full.state(), lambda: False).short_prompt
            first = service.complete(CompletionRequest(uri=uri, text=text, offset=len(text)))
            assert first.stats.short_prompt
            tokens[head] = first.stats.prompt_tokens
        finally:
            service.close()
    # 0: the file's lines only; 24: the section's first lines (and the open file's path
    # line); 512: the whole section.
    assert tokens[0] < tokens[24] <= tokens[0] + 24 + 12 < tokens[512]


def test_an_enter_branch_reads_the_section_only_where_a_request_would_not_wait_long(tiny_qwen,
                                                                                   tmp_path):
    # A cursor job that reads what a request would (idle.cursor_prompt = "request") against an
    # Enter branch, whose state the user may reach while it is read: on a CPU that reads the
    # short prompt with the section within idle.cold_prompt_ms (1 ms; the measured speed
    # pinned: 0.002 ms a prompt token) both read it; on one that does not (10 ms a token) both
    # read the short prompt without it, the branch too (it read the section before 2026-12-05).
    root = workspace(tmp_path)
    text = LONG_APP
    uri = (root / "pkg" / "app.py").as_uri()
    path = str(root / "pkg" / "app.py")
    grown = {}
    for token_ms in (0.002, 10.0):
        service = cold_service(tiny_qwen, root, cursor_prompt="request")
        costs = service.backend.engine.costs
        try:
            costs.prefill_token_ms = 10.0
            first = service.complete(CompletionRequest(uri=uri, text=text, offset=len(text)))
            assert first.stats.short_prompt and first.stats.prompt_tokens <= 200 + 8
            for kind in ("cursor", "enter"):
                costs.prefill_token_ms = token_ms
                branch = NextPrompt(kind, uri, path, text, len(text))
                result = service.prefill(branch, branch.state(), lambda: False)
                assert result is not None and result.short_prompt
                grown[kind, token_ms] = result.prompt_tokens - first.stats.prompt_tokens
        finally:
            service.close()
    assert grown["cursor", 0.002] > 40 and grown["enter", 0.002] > 40  # the section
    assert grown["cursor", 10.0] == 0 and grown["enter", 10.0] < 8  # (Enter's indentation)


def test_an_enter_branch_weighs_the_section_against_what_a_request_there_would_read(tiny_qwen,
                                                                                   tmp_path):
    # The cursor job read the start of the full prompt (three 16-token chunks of the other
    # files' section) before a request came, so the request read the short prompt with that
    # front. At 0.00195 ms a prompt token the short prompt with the whole section (about 560
    # tokens to read) is not readable within idle.cold_prompt_ms (1 ms), the ~470 tokens it
    # adds over the one without the section are, but a request in the Enter's state would
    # read a few: the branch reads what that request would (it read the whole section before,
    # and an Enter pressed meanwhile waited for it).
    root = workspace(tmp_path)
    names = ", ".join(f"helper_{i}" for i in range(12))
    (root / "pkg" / "core.py").write_text(CORE + "".join(
        f"\n\ndef helper_{i}(value: int, scale: float = 1.0) -> float:\n"
        "    return value * scale\n" for i in range(12)))
    text = (f"from pkg.core import Engine, {names}\n"
            + "".join(f"total_{i:03} = helper_{i % 12}(total, {i})\n" for i in range(120))
            + '\n\ndef main():\n    engine = Engine("x")')
    (root / "pkg" / "app.py").write_text(text)
    uri = (root / "pkg" / "app.py").as_uri()
    path = str(root / "pkg" / "app.py")
    service = cold_service(tiny_qwen, root, chunk_tokens=16)
    costs = service.backend.engine.costs
    try:
        costs.prefill_token_ms = 10.0
        start = service.ubatches_done()
        cursor = NextPrompt("cursor", uri, path, text, len(text))
        front = service.prefill(cursor, cursor.state(),
                                lambda: service.ubatches_done() - start >= 3)
        assert front is not None and front.outcome == "cancelled"
        first = service.complete(CompletionRequest(uri=uri, text=text, offset=len(text)))
        assert first.stats.short_prompt
        assert first.stats.reused_tokens >= front.evaluated_tokens - 8  # the front
        costs.prefill_token_ms = 0.00195
        enter = NextPrompt("enter", uri, path, text, len(text))
        branch = service.prefill(enter, enter.state(), lambda: False)
        assert branch is not None and branch.short_prompt
        assert branch.evaluated_tokens <= 12  # the new line and what follows it
        entered, offset = enter.state()
        after = service.complete(CompletionRequest(uri=uri, text=entered, offset=offset))
        assert after.stats.short_prompt and after.stats.evaluated_tokens <= 2
    finally:
        service.close()


def test_cold_context_first_makes_the_first_answer_wait_for_the_section(tiny_qwen, tmp_path):
    root = workspace(tmp_path)
    text = LONG_APP
    uri = (root / "pkg" / "app.py").as_uri()
    tokens = {}
    for first in (False, True):
        service = cold_service(tiny_qwen, root, cold_context_first=first)
        try:
            answer = service.complete(CompletionRequest(uri=uri, text=text, offset=len(text)))
            assert answer.stats.short_prompt
            tokens[first] = answer.stats.prompt_tokens
        finally:
            service.close()
    assert tokens[True] > tokens[False] + 40


def test_far_down_a_long_file_its_imports_reach_the_prompt(tiny_qwen, tmp_path):
    from lsp_coder.backends.local_prompt import build_prompt
    from lsp_coder.completion.context import split_document
    from lsp_coder.completion.related.import_head import import_head

    text = "from pkg.core import Engine\n" + LONG_APP.replace(APP, "") * 3 + "engine = "
    uri = (tmp_path / "app.py").as_uri()
    counts = {}
    for imports in (False, True):
        service = service_for(tiny_qwen, idle={"enabled": False},
                              completion={"max_tokens": 4, "prefix_tokens": 512,
                                          "recent_lines": 0},
                              context={"imports": imports, "workspace": False,
                                       "open_files": False})
        try:
            answer = service.complete(CompletionRequest(uri=uri, text=text, offset=len(text)))
            counts[imports] = answer.stats.prompt_tokens
            engine = service.backend.engine
            parts = split_document(text, len(text), prefix_tokens=512, suffix_tokens=256)
            head = import_head(text, len(text) - len(parts.line_prefix) - len(parts.above),
                               tmp_path / "app.py", "python")
            expected = build_prompt(engine.template, replace(parts, imports=head),
                                    engine.tokenize, engine.detokenize, prefix_tokens=512,
                                    suffix_tokens=256, extra_tokens=0).tokens
        finally:
            service.close()
    assert head == "from pkg.core import Engine\n"
    assert counts[True] == len(expected) and counts[False] != counts[True]
