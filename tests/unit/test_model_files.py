"""Assembling an embedded model from numbered part packages."""

from __future__ import annotations

import hashlib
import sys

import pytest

from lsp_coder.config import Config, apply
from lsp_coder.load_progress import LoadProgress
from lsp_coder.model_files import (
    DEFAULT_DRAFT,
    DEFAULT_TARGET,
    EmbeddedModel,
    ModelUnavailable,
    check_model_file,
    ensure_embedded,
    load_plan,
    resolve_model_paths,
)


@pytest.fixture
def parts_on_path(tmp_path, monkeypatch):
    """Three real (tiny) part packages on sys.path, like the PyPI ones."""
    blobs = [b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 40, b"tail" * 100]
    for i, blob in enumerate(blobs, 1):
        pkg = tmp_path / "site" / f"lspcodertestpart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("LSP_CODER_CACHE", str(tmp_path / "cache"))
    for i in range(1, 4):
        sys.modules.pop(f"lspcodertestpart{i}", None)
    whole = b"".join(blobs)
    return EmbeddedModel("test model", "test.gguf", "lspcodertestpart", 3, len(whole),
                         hashlib.sha256(whole).hexdigest()), whole


def test_parts_are_joined_in_order_verified_and_reused(parts_on_path, tmp_path):
    model, whole = parts_on_path
    seen = []
    path = ensure_embedded(model, lambda done, total: seen.append((done, total)))
    assert path.read_bytes() == whole
    assert path.parent == tmp_path / "cache" / "models"
    assert seen[-1] == (len(whole), len(whole))
    assert not list(path.parent.glob(".assemble-*"))  # no temp file left behind
    seen.clear()
    assert ensure_embedded(model, lambda d, t: seen.append(d)) == path
    assert seen == []  # verified once: the marker skips the hash next time


def test_a_wrong_digest_is_refused_and_nothing_is_left(parts_on_path, tmp_path):
    model, whole = parts_on_path
    bad = EmbeddedModel(model.name, model.filename, model.package, 3, model.size, "0" * 64)
    with pytest.raises(ModelUnavailable, match="sha256"):
        ensure_embedded(bad)
    assert not (tmp_path / "cache" / "models" / "test.gguf").exists()
    assert not list((tmp_path / "cache" / "models").glob(".assemble-*"))


def test_a_missing_part_package_names_the_package_and_the_fix(parts_on_path):
    model, _ = parts_on_path
    more = EmbeddedModel(model.name, "more.gguf", model.package, 4, model.size, model.sha256)
    with pytest.raises(ModelUnavailable,
                       match=r"lspcodertestpart4.*pipx install --force .\.\[model\]"):
        ensure_embedded(more)


def test_a_corrupted_cached_file_is_rebuilt(parts_on_path):
    model, whole = parts_on_path
    path = ensure_embedded(model)
    path.write_bytes(b"x" * len(whole))  # same size, new mtime: the marker no longer matches
    assert ensure_embedded(model).read_bytes() == whole


def test_check_model_file(tmp_path):
    with pytest.raises(ModelUnavailable, match="not found"):
        check_model_file(tmp_path / "nope.gguf")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model")
    with pytest.raises(ModelUnavailable, match="not a GGUF"):
        check_model_file(junk)


def test_resolve_model_paths_takes_configured_files_and_honours_a_disabled_draft(tmp_path):
    target, draft = tmp_path / "t.gguf", tmp_path / "d.gguf"
    for path in (target, draft):
        path.write_bytes(b"GGUF" + b"\0" * 16)
    both = apply(Config(), {"model": {"path": str(target), "draft_path": str(draft)}}, "test")
    assert resolve_model_paths(both) == (target, draft)
    for off in ("", "none", "Off"):
        alone = apply(Config(), {"model": {"path": str(target), "draft_path": off}}, "test")
        assert resolve_model_paths(alone) == (target, None)
    missing = apply(Config(), {"model": {"path": str(target),
                                         "draft_path": str(tmp_path / "x.gguf")}}, "test")
    with pytest.raises(ModelUnavailable, match="not found"):
        resolve_model_paths(missing)


def test_load_plan_prepares_each_unverified_embedded_model_then_loads_the_weights(
        tmp_path, monkeypatch):
    monkeypatch.setenv("LSP_CODER_CACHE", str(tmp_path / "empty-cache"))
    target, draft = DEFAULT_TARGET.filename, DEFAULT_DRAFT.filename
    plan = load_plan(Config())
    assert [s.key for s in plan] == [f"prepare:{target}", f"prepare:{draft}",
                                     f"load:{target}", f"load:{draft}"]
    assert [s.size for s in plan] == [DEFAULT_TARGET.size, DEFAULT_DRAFT.size] * 2
    no_draft = apply(Config(), {"model": {"draft_path": "none"}}, "test")
    assert [s.key for s in load_plan(no_draft)] == [f"prepare:{target}", f"load:{target}"]
    # The draft is still assembled when only the engine leaves it out, as resolve_model_paths
    # does; its weights are not read.
    unread = apply(Config(), {"speculative": {"draft_model": False}}, "test")
    assert [s.key for s in load_plan(unread)] == [f"prepare:{target}", f"prepare:{draft}",
                                                  f"load:{target}"]
    file = tmp_path / "own.gguf"
    file.write_bytes(b"GGUF" + b"\0" * 60)
    own = apply(Config(), {"model": {"path": str(file)}}, "test")
    assert [(s.key, s.size) for s in load_plan(own)] == [("load:own.gguf", 64)]


def test_assembly_reports_into_the_loads_single_percentage(parts_on_path, monkeypatch):
    model, whole = parts_on_path
    monkeypatch.setattr("lsp_coder.model_files.DEFAULT_TARGET", model)
    config = apply(Config(), {"model": {"draft_path": "none"}}, "test")
    seen: list[tuple[int, str]] = []
    plan = load_plan(config)
    assert [s.key for s in plan] == ["prepare:test.gguf", "load:test.gguf"]
    path, draft = resolve_model_paths(config, LoadProgress(plan, lambda p, m: seen.append((p, m))))
    assert path.read_bytes() == whole and draft is None
    percentages = [p for p, _ in seen]
    assert percentages == sorted(set(percentages)) and percentages[-1] == 50, seen
    assert {m for _, m in seen} == {"preparing test.gguf"}
    assert load_plan(config)[0].key == "load:test.gguf"  # verified now: nothing to prepare
