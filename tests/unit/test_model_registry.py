"""The presets and the names `lsp-coder model` takes."""

from __future__ import annotations

import pytest

from lsp_coder.model_registry import (
    COMMIT,
    PRESETS,
    SHA256,
    HubFile,
    Preset,
    UnknownModel,
    files_of,
    find,
)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_every_preset_is_pinned_to_a_commit_and_a_sha256(preset):
    for hub_file in filter(None, files_of(preset)):
        assert COMMIT.fullmatch(hub_file.revision) and hub_file.pinned
        assert SHA256.fullmatch(hub_file.sha256)
        assert hub_file.filename.endswith(".gguf") and hub_file.repo.count("/") == 1
    sizes = [f.size for f in filter(None, files_of(preset))]
    if None not in sizes:  # the estimate is the files' own size when both are pinned
        assert preset.approx_bytes == sum(sizes)


def test_the_issues_presets_are_there_each_with_a_draft_but_the_smallest():
    names = {p.name: p for p in PRESETS}
    for size in ("0.5b", "1.5b", "3b", "7b", "14b"):
        assert f"qwen2.5-coder-{size}" in names
    assert all(p.draft is not None for p in PRESETS if p.name != "qwen2.5-coder-0.5b")
    assert "codellama" in names["codellama-7b"].target.filename
    assert "tinyllama" in names["codellama-7b"].draft.filename


def test_names_resolve_to_presets_or_hub_files():
    assert isinstance(find("Qwen2.5-Coder-7B"), Preset)
    assert find("owner/repo/sub/file.gguf") == HubFile("owner/repo", "sub/file.gguf", "main")
    assert find("owner/repo/file.gguf@v1").revision == "v1"
    assert find("owner/repo/file.gguf", revision="abc").revision == "abc"
    for bad in ("qwen", "owner/file.gguf", "owner/repo/file.bin", "owner/../file.gguf/x.gguf"):
        with pytest.raises(UnknownModel, match="unknown model"):
            find(bad)
    with pytest.raises(UnknownModel, match="pinned to its own revision"):
        find("qwen2.5-coder-7b", revision="main")
