"""Recent edits reach the local engine's prompt: a rename in one file shows in the prompt of
another, after the other files' section, and keys typed on the cursor's line leave the front
of the prompt as it was."""

from __future__ import annotations

from pathlib import Path

from lsp_coder.backends.fim_text import file_entry
from lsp_coder.completion.service import CompletionRequest, CompletionService
from lsp_coder.config import Config, apply

CORE = ("import os\n\n\ndef load_config(path, strict=False):\n    with open(path) as f:\n"
        "        return f.read()\n\n\ndef save_config(path, text):\n    with open(path, 'w')"
        " as f:\n        f.write(text)\n")
APP = "from pkg import core\n\n\ndef main():\n    settings = "


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    (root / "pkg" / "app.py").write_text(APP)
    return root


def service_for(model: Path, root: Path, **context) -> CompletionService:
    config = apply(Config(), {"model": {"path": str(model), "n_ctx": 4096, "n_seq_max": 4},
                              "completion": {"max_tokens": 4}, "idle": {"enabled": False},
                              "context": {"workspace": False, **context}}, "test")
    service = CompletionService(config)
    assert service.load() is None
    service.workspace_folders([root.as_uri()])
    return service


def rename_in_core(service: CompletionService, uri: str) -> str:
    """Open core.py and type ``_v2`` after ``load_config`` as an editor sends it; its text."""
    text = CORE
    service.document_opened(uri, text)
    at = text.index("def load_config") + len("def load_config")
    line = text.count("\n", 0, at)
    for char in "_v2":
        text = text[:at] + char + text[at:]
        at += 1
        service.document_changed(uri, line, line, lambda t=text: t)
    return text


def prompt_of(service: CompletionService, req: CompletionRequest):
    backend = service.backend
    query = backend._gathered(service._query(req))
    return query.parts, backend._prompt(query, service.config).tokens


def test_a_rename_in_one_file_reaches_the_prompt_of_another_in_its_new_form(tiny_qwen,
                                                                          tmp_path):
    root = workspace(tmp_path)
    core, app = (root / "pkg" / "core.py").as_uri(), (root / "pkg" / "app.py").as_uri()
    req = CompletionRequest(uri=app, text=APP, offset=len(APP))
    got = {}
    for on in (False, True):
        service = service_for(tiny_qwen, root, recent_edits=on)
        try:
            rename_in_core(service, core)
            service.document_opened(app, APP)
            got[on] = prompt_of(service, req)
            assert service.complete(req).stats.prompt_tokens == len(got[on][1])
        finally:
            service.close()
    parts, tokens = got[True]
    path, body = parts.extra[-1]  # last: nearest the open file
    assert path == "pkg/core.py" and "def load_config_v2(path, strict=False):" in body
    assert parts.path == "pkg/app.py" and parts.repo == "proj"
    assert not any("load_config_v2" in b for _, b in got[False][0].extra)
    # The section before the edits is the same with and without them (it stays cached).
    assert got[True][0].extra[:-1] == got[False][0].extra
    service = service_for(tiny_qwen, root)
    try:
        entry = service.backend.engine.tokenize(file_entry(path, body))
    finally:
        service.close()
    without = got[False][1]
    extra_tokens = len(tokens) - len(without)
    if got[False][0].extra:
        assert extra_tokens == 1 + len(entry)  # the file separator and the entry
    else:
        assert extra_tokens > len(entry)  # and the repository and open file's path lines


def test_keys_typed_on_the_cursor_line_keep_the_front_of_the_prompt(tiny_qwen, tmp_path):
    root = workspace(tmp_path)
    core, app = (root / "pkg" / "core.py").as_uri(), (root / "pkg" / "app.py").as_uri()
    # Only recent edits before the open file (the section follows what the cursor uses).
    service = service_for(tiny_qwen, root, definitions=False, open_files=False)
    try:
        rename_in_core(service, core)
        text = APP
        service.document_opened(app, text)
        line = text.count("\n")
        prompts = []
        for char in "core.load_config_v2(":
            text += char
            service.document_changed(app, line, line, lambda t=text: t)
            parts, tokens = prompt_of(service, CompletionRequest(uri=app, text=text,
                                                                 offset=len(text)))
            assert "def load_config_v2(" in parts.extra[-1][1]
            prompts.append(tokens)
        # Then an edit elsewhere finishes (core.py saved with another change): the front
        # changes once, after the other files' section.
        service.document_saved(core, CORE.replace("strict=False", "strict=True"))
        parts, after = prompt_of(service, CompletionRequest(uri=app, text=text,
                                                            offset=len(text)))
        assert "def load_config(path, strict=True):" in parts.extra[-1][1]
    finally:
        service.close()
    for before, now in zip(prompts, prompts[1:]):
        same = next((i for i, (a, b) in enumerate(zip(before, now)) if a != b), len(before))
        assert same >= len(before) - 2  # only the typed text's last tokens differ
    same = next(i for i, (a, b) in enumerate(zip(prompts[-1], after)) if a != b)
    assert 0 < same < len(prompts[-1]) - 20  # the finished edit moved the front, once
