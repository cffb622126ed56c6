"""Write the model choice into the user's TOML config, keeping everything else as it was.

``tomlkit`` edits the document in place: the user's other keys, comments, order and blank lines
survive; only ``[model] path`` and ``draft_path`` change (and a ``[model]`` table appears if
there was none). The new text replaces the file atomically.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

from .config import ConfigError


def user_config_path(explicit: str | None = None) -> Path:
    """The file ``model use`` writes: ``--config``, ``$LSP_CODER_CONFIG``, or
    ``$XDG_CONFIG_HOME/lsp-coder/config.toml`` (``~/.config/...``), created if missing."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("LSP_CODER_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "lsp-coder" / "config.toml"


def set_model_paths(path: Path, target: str | None, draft: str | None) -> None:
    """Set ``[model] path`` and ``draft_path`` in the TOML file at ``path``.

    ``target`` None removes both keys (back to the embedded default); ``draft`` None writes
    ``draft_path = "none"`` (no draft model) for a target.

    Raises:
        ConfigError: the existing file is not valid TOML (nothing is written then).
    """
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix it or pass --config") from exc
    model = doc.get("model")
    if model is None:
        if target is None:
            return
        model = tomlkit.table()
        doc["model"] = model
    elif not isinstance(model, dict):
        raise ConfigError(f"{path}: 'model' is not a table")
    if target is None:
        for key in ("path", "draft_path"):
            if key in model:
                del model[key]
    else:
        model["path"] = target
        model["draft_path"] = draft if draft is not None else "none"
    new_text = tomlkit.dumps(doc)
    tomllib.loads(new_text)  # what lsp-coder's reader will see
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new_text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)

