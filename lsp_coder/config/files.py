"""The config file: where it is, reading it, and the file paths in settings made absolute."""

from __future__ import annotations

import os
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from .layers import ConfigError, apply
from .sections import Config


def default_config_path() -> Path | None:
    """``$LSP_CODER_CONFIG``, else the XDG config file if it exists."""
    explicit = os.environ.get("LSP_CODER_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    candidate = Path(base) / "lsp-coder" / "config.toml"
    return candidate if candidate.is_file() else None


def read_file(path: Path | None) -> dict[str, Any]:
    """The settings tree of the TOML file at ``path`` (no file: empty); raises ConfigError
    when it cannot be read."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def load_file(path: Path | None) -> Config:
    """Defaults with the TOML file at ``path`` merged over them (no file: defaults)."""
    return apply(Config(), read_file(path), str(path))


def absolute_paths(config: Config, cwd: str | Path) -> Config:
    """``config`` with relative file paths (``[model] path``/``draft_path``, ``[backend]
    ca_file``) made absolute from ``cwd``: the folder the editor started lsp-coder in, which a
    shared server does not run in."""
    def fixed(path: str) -> str:
        if not path or path == "none" or path.startswith("~") or os.path.isabs(path):
            return path
        return str(Path(cwd) / path)

    return replace(
        config,
        model=replace(config.model, path=fixed(config.model.path),
                      draft_path=fixed(config.model.draft_path)),
        backend=replace(config.backend, ca_file=fixed(config.backend.ca_file)))
