"""``model pull`` against a stand-in of the hub's routes on loopback: resume, checks, errors."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path

import pytest

from lsp_coder.model_pull import PullError, is_pulled, local_path, partial_bytes, pull
from lsp_coder.model_registry import HubFile
from tests.fixtures.fake_hub import FakeHub

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "someone/Tiny-GGUF"
NAME = "tiny.Q8_0.gguf"


@pytest.fixture
def data() -> bytes:
    # A file the size of a small GGUF part; its bytes vary so a resumed copy is checked.
    return b"GGUF" + bytes(range(256)) * 4096


@pytest.fixture
def hub(data, monkeypatch, tmp_path):
    fake = FakeHub().start()
    fake.add(REPO, COMMIT, NAME, data)
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setenv("LSP_CODER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield fake
    fake.stop()


def pinned(data: bytes, **kw) -> HubFile:
    facts = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()} | kw
    return HubFile(REPO, NAME, COMMIT, **facts)


def test_a_pinned_file_is_downloaded_checked_and_then_served_from_the_cache(hub, data):
    path = pull(pinned(data))
    assert path == local_path(pinned(data))
    assert path.read_bytes() == data
    assert is_pulled(pinned(data))
    assert [r.path for r in hub.gets()] == [f"/cdn/{hashlib.sha256(data).hexdigest()}"]
    seen = len(hub.requests)
    assert pull(pinned(data)) == path
    assert len(hub.requests) == seen  # no request at all once it is in the cache


def test_an_interrupted_download_keeps_its_bytes_and_the_next_pull_resumes(hub):
    # huggingface_hub writes what arrives in chunks of 10 MiB: the file outgrows one.
    data = (b"GGUF" + bytes(range(256)) * 4096) * 24
    hub.add(REPO, COMMIT, "big.gguf", data)
    big = HubFile(REPO, "big.gguf", COMMIT, len(data), hashlib.sha256(data).hexdigest())
    hub.cut_after(15_000_000)
    with pytest.raises(PullError) as failed:
        pull(big)
    kept = partial_bytes(big)
    assert 0 < kept <= 15_000_000
    assert "503" in str(failed.value)
    assert f"{kept:,} bytes downloaded are kept: pull again to resume" in str(failed.value)
    assert not local_path(big).exists()

    hub.down = False
    path = pull(big)
    assert path.read_bytes() == data
    first, *retries, last = hub.gets()
    assert first.range is None
    assert last.range == f"bytes={kept}-"  # only the rest was asked for
    assert partial_bytes(big) == 0


def test_bytes_that_do_not_match_the_sha256_are_removed_and_the_pull_fails(hub, data):
    hub.corrupt = True
    with pytest.raises(PullError, match="sha256 is .* expected .* damaged file was removed"):
        pull(pinned(data))
    assert partial_bytes(pinned(data)) == 0 and not is_pulled(pinned(data))
    hub.corrupt = False
    assert pull(pinned(data)).read_bytes() == data


def test_an_unpinned_name_is_checked_against_the_hubs_own_sha256(hub, data):
    # owner/repo/file.gguf typed by a user: no pinned digest, the hub's LFS etag is it.
    hub.corrupt = True
    with pytest.raises(PullError, match="sha256"):
        pull(HubFile(REPO, NAME))
    hub.corrupt = False
    assert pull(HubFile(REPO, NAME)).read_bytes() == data


def test_a_hub_file_that_is_not_the_pinned_one_is_refused_before_downloading(hub, data):
    hub.advertise["sha256"] = "f" * 64
    with pytest.raises(PullError, match="the hub reports sha256 f+, lsp-coder pins"):
        pull(pinned(data))
    hub.advertise = {"size": len(data) + 1}
    with pytest.raises(PullError, match="reports size"):
        pull(pinned(data))
    assert hub.gets() == []


@pytest.mark.parametrize("hub_file, message", [
    (HubFile("nobody/Nothing-GGUF", NAME), "no model repository nobody/Nothing-GGUF on"),
    (HubFile(REPO, NAME, "f" * 40), "has no revision 'ffff"),
    (HubFile(REPO, "other.gguf", COMMIT), "has no file other.gguf at"),
])
def test_what_the_hub_does_not_have_is_named(hub, hub_file, message):
    with pytest.raises(PullError, match=message):
        pull(hub_file)


def test_a_plain_404_says_404(hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url + "/not-a-hub")
    with pytest.raises(PullError, match="answered 404"):
        pull(HubFile(REPO, NAME))


def test_offline_mode_names_itself_and_makes_no_request(hub, data, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(PullError, match="offline mode is on \\(HF_HUB_OFFLINE\\)"):
        pull(pinned(data))
    assert hub.requests == []
    monkeypatch.delenv("HF_HUB_OFFLINE")
    path = pull(pinned(data))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert pull(pinned(data)) == path  # what is downloaded still works offline


def test_no_network_says_the_hub_cannot_be_reached(monkeypatch, tmp_path, data):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("LSP_CODER_CACHE", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(PullError, match=f"cannot reach http://127.0.0.1:{port} \\(no network"):
        pull(pinned(data))


def test_a_file_larger_than_the_free_disk_is_refused_before_downloading(hub, data):
    hub.advertise["size"] = 1 << 60
    with pytest.raises(PullError, match="not enough disk space .* GB to download"):
        pull(HubFile(REPO, NAME))
    assert hub.gets() == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_disk_that_fills_up_during_the_download_says_so(hub, data):
    # /dev/full answers every write with ENOSPC, as a full disk does: the part file is it.
    path = local_path(pinned(data))
    path.parent.mkdir(parents=True)
    part = path.with_name(path.name + ".part")
    part.symlink_to("/dev/full")
    part.with_name(part.name + ".json").write_text(json.dumps(
        {"commit": COMMIT, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}))
    with pytest.raises(PullError, match="is full after .* pull again to resume"):
        pull(pinned(data))
    assert not is_pulled(pinned(data))


def test_a_partial_file_of_another_version_is_not_resumed(hub, data, tmp_path):
    path = local_path(pinned(data))
    path.parent.mkdir(parents=True)
    part = path.with_name(path.name + ".part")
    part.write_bytes(b"x" * 1000)  # left by a download of another commit: no note
    assert pull(pinned(data)).read_bytes() == data
    assert hub.gets()[-1].range is None
    assert not Path(str(part)).exists()
