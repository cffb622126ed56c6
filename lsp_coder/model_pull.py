"""Download a model file from the Hugging Face Hub into the model cache, resumably, and check it.

``huggingface_hub`` does the talking: the file's URL (``HF_ENDPOINT`` honoured), the HEAD that
reports its commit, size and sha256 (``X-Repo-Commit``, ``X-Linked-Size``, ``X-Linked-Etag``),
the token (``HF_TOKEN``), offline mode (``HF_HUB_OFFLINE``) and the streamed GET with a
``Range`` header. ``hf_hub_download`` itself is not used because it deletes a partial file when
a download fails; here the bytes stay in ``<file>.part`` beside a note of which file they
belong to, and the next pull asks only for the rest.

Layout: ``<cache>/models/<owner>--<repo>/<file>``, a ``.verified`` marker beside it (size and
mtime of a file whose sha256 matched), as for the embedded model.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .model_files import ModelUnavailable, Progress, cache_dir, sha256_of
from .model_registry import SHA256, HubFile

"""Called with (bytes done, bytes total) while a downloaded file's sha256 is computed (the
download shows huggingface_hub's own bar)."""


class PullError(ModelUnavailable):
    """A download that cannot go on; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Remote:
    """What the hub says about a file at a revision (its HEAD answer)."""

    url: str  # where the bytes are (the hub's redirect target, e.g. its CDN)
    commit: str  # the commit the revision resolved to
    size: int | None  # X-Linked-Size (or Content-Length)
    sha256: str | None  # X-Linked-Etag when it is a sha256 (an LFS file)


def local_path(hub_file: HubFile) -> Path:
    """Where ``hub_file`` lives once pulled (it may not exist yet)."""
    owner, name = hub_file.repo.split("/", 1)
    return cache_dir() / "models" / f"{owner}--{name}" / Path(*hub_file.filename.split("/"))


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".part")


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def is_pulled(hub_file: HubFile) -> bool:
    """The file is in the cache and was checked (its marker matches its size and mtime)."""
    path = local_path(hub_file)
    marker = _marker(path)
    try:
        return path.is_file() and marker.read_text() == _stamp(path)
    except OSError:
        return False


def partial_bytes(hub_file: HubFile) -> int:
    """Bytes of an interrupted download waiting to be resumed (0 if none)."""
    try:
        return _partial(local_path(hub_file)).stat().st_size
    except OSError:
        return 0


def endpoint() -> str:
    """The hub's address: ``$HF_ENDPOINT`` as it is now, else huggingface_hub's."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def offline() -> bool:
    from huggingface_hub import constants

    value = os.environ.get("HF_HUB_OFFLINE", "")
    return constants.is_offline_mode() or value.upper() in ("1", "ON", "YES", "TRUE")


def pull(hub_file: HubFile, progress: Progress | None = None) -> Path:
    """The checked local copy of ``hub_file``, downloading (or finishing) it if needed.

    Raises:
        PullError: offline and not cached, no network, not on the hub (repository, revision
            or file), a size or sha256 that differs from the pinned one, not enough disk, or a
            download that failed (its bytes kept for the next pull).
    """
    path = local_path(hub_file)
    if is_pulled(hub_file):
        return path
    if offline():
        raise PullError(f"{hub_file.spec} is not downloaded and offline mode is on"
                        " (HF_HUB_OFFLINE): unset it to download, or use a model you have")
    remote = _remote(hub_file)
    expected_size = _expected(hub_file.size, remote.size, "size", hub_file)
    expected_sha = _expected(hub_file.sha256, remote.sha256, "sha256", hub_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = _partial(path)
    note = part.with_name(part.name + ".json")
    identity = {"commit": remote.commit, "sha256": expected_sha, "size": expected_size}
    if part.exists() and _read_note(note) != identity:
        part.unlink()  # bytes of another version of the file: start over
    _check_space(path.parent, (expected_size or 0) - _size(part))
    note.write_text(json.dumps(identity))
    _download(remote.url, part, expected_size, hub_file)
    digest = sha256_of([part], _size(part), progress)
    if expected_sha is not None and digest != expected_sha:
        part.unlink()
        note.unlink(missing_ok=True)
        raise PullError(f"{hub_file.spec}: the downloaded file's sha256 is {digest}, expected"
                        f" {expected_sha}; the damaged file was removed: pull again")
    os.replace(part, path)
    note.unlink(missing_ok=True)
    _marker(path).write_text(_stamp(path))
    return path


def _remote(hub_file: HubFile) -> Remote:
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    base = endpoint()
    url = hf_hub_url(hub_file.repo, hub_file.filename, revision=hub_file.revision, endpoint=base)
    try:
        meta = get_hf_file_metadata(url, endpoint=base)
    except Exception as exc:  # noqa: BLE001 - translated for a person below
        raise PullError(_explain(exc, hub_file, base)) from exc
    if meta.commit_hash is None:
        raise PullError(f"{base} answered without the hub's X-Repo-Commit header: is HF_ENDPOINT"
                        " a Hugging Face Hub (or a mirror of one)?")
    if hub_file.pinned and meta.commit_hash != hub_file.revision:
        raise PullError(f"{hub_file.spec}: asked for commit {hub_file.revision}, the hub"
                        f" answered {meta.commit_hash}")
    sha = meta.etag if meta.etag and SHA256.fullmatch(meta.etag) else None
    return Remote(meta.location, meta.commit_hash, meta.size, sha)


def _expected(pinned, reported, what: str, hub_file: HubFile):
    """The pinned value, which the hub's report must match when it gives one."""
    if pinned is not None and reported is not None and pinned != reported:
        raise PullError(f"{hub_file.spec}@{hub_file.revision[:12]}: the hub reports {what}"
                        f" {reported}, lsp-coder pins {pinned}: refusing a file that is not"
                        " the one checked")
    return pinned if pinned is not None else reported


def _download(url: str, part: Path, size: int | None, hub_file: HubFile) -> None:
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import build_hf_headers

    done = _size(part)
    if size is not None and done > size:
        part.unlink()
        done = 0
    try:
        # NOTE: in append mode writes land at the end of the file, also after http_get
        # truncates it for a server that ignored the Range header and sent the whole file.
        with part.open("ab") as f:
            http_get(url, f, resume_size=done, headers=build_hf_headers(),
                     expected_size=size, displayed_filename=Path(hub_file.filename).name)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise PullError(f"the disk holding {part.parent} is full after {_size(part):,}"
                            f" of {size or 0:,} bytes of {hub_file.spec}: free some space and"
                            " pull again to resume") from exc
        raise PullError(_explain(exc, hub_file, endpoint(), kept=_size(part))) from exc
    except Exception as exc:  # noqa: BLE001 - any failure keeps the bytes for the next pull
        raise PullError(_explain(exc, hub_file, endpoint(), kept=_size(part))) from exc


def _explain(exc: BaseException, hub_file: HubFile, base: str, kept: int = 0) -> str:
    """A person's words for why the hub could not give ``hub_file``."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    resume = (f"; the {kept:,} bytes downloaded are kept: pull again to resume" if kept else "")
    if isinstance(exc, OfflineModeIsEnabled):
        return (f"{hub_file.spec} is not downloaded and offline mode is on (HF_HUB_OFFLINE):"
                " unset it to download")
    if isinstance(exc, GatedRepoError):
        return (f"{hub_file.repo} is gated: accept its terms on the hub and set HF_TOKEN to a"
                " token of that account")
    if isinstance(exc, RepositoryNotFoundError):
        return (f"no model repository {hub_file.repo} on {base} (a private one needs HF_TOKEN)")
    if isinstance(exc, RevisionNotFoundError):
        return f"{hub_file.repo} has no revision {hub_file.revision!r}"
    if isinstance(exc, RemoteEntryNotFoundError):
        return f"{hub_file.repo} has no file {hub_file.filename} at {hub_file.revision}"
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        status = exc.response.status_code
        if status == 404:
            return f"{base} answered 404 (not found) for {hub_file.spec}{resume}"
        return f"{base} answered HTTP {status} for {hub_file.spec}{resume}"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if _is_network(exc):
        return f"cannot reach {base} (no network? {text}){resume}"
    return f"downloading {hub_file.spec} failed: {text}{resume}"


def _is_network(exc: BaseException) -> bool:
    import httpx2

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, (httpx2.TransportError, ConnectionError, TimeoutError)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _check_space(folder: Path, needed: int) -> None:
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise PullError(f"not enough disk space in {folder}: {needed / 1e9:.2f} GB to download,"
                        f" {free / 1e9:.2f} GB free")


def _read_note(note: Path) -> dict | None:
    try:
        return json.loads(note.read_text())
    except (OSError, ValueError):
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


