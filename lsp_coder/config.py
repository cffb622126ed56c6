"""One typed configuration tree.

Precedence, lowest first: the defaults below < a TOML file (``--config PATH``,
``$LSP_CODER_CONFIG`` or ``$XDG_CONFIG_HOME/lsp-coder/config.toml``) < the client's
``initializationOptions`` < ``workspace/didChangeConfiguration``. Every level is the same tree as
``config.example.toml``; a layer is merged key by key over the one below it.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import cattrs


class ConfigError(ValueError):
    """A config layer has a wrong type or an unknown key; the message names the key."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelConfig:
    path: str = ""
    draft_path: str = ""
    n_ctx: int = 8192
    n_batch: int = 512
    n_ubatch: int = 512
    n_seq_max: int = 8
    n_threads: int = 0
    n_gpu_layers: int = 0
    use_mlock: bool = False
    use_mmap: bool = True
    use_extra_bufts: Literal["auto", "true", "false"] = "auto"


@dataclass(frozen=True, kw_only=True, slots=True)
class CompletionConfig:
    max_tokens: int = 96
    max_lines: int = 8
    temperature: float = 0.0
    seed: int = 0
    debounce_ms: int = 150
    prefix_tokens: int = 1024
    suffix_tokens: int = 256
    extra_context_tokens: int = 256
    fim_layout: Literal["auto", "psm", "spm"] = "auto"
    inline_budget_ms: int = 1500
    completion_budget_ms: int = 1500


@dataclass(frozen=True, kw_only=True, slots=True)
class CacheConfig:
    reuse: bool = True
    block_size: int = 32
    kv_budget_tokens: int = 0
    shift_reuse: bool = False
    shift_min_tokens: int = 64


@dataclass(frozen=True, kw_only=True, slots=True)
class SpeculativeConfig:
    enabled: bool = True
    draft_model: bool = True
    ngram: bool = True
    previous_suggestion: bool = True
    greedy_memory: bool = True
    max_draft: int = 8
    p_min: float = 0.5


@dataclass(frozen=True, kw_only=True, slots=True)
class FimStrings:
    """An explicit FIM template as text (``backend.fim_template = {prefix = ..., ...}``)."""

    prefix: str = ""
    suffix: str = ""
    middle: str = ""
    file_sep: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class BackendConfig:
    """Where completions are computed: in this process, or on a shared serving engine."""

    kind: Literal["local", "llama-server", "openai", "ollama"] = "local"
    url: str = ""
    model: str = ""
    fim_template: str | FimStrings = "auto"
    api_key_env: str = ""
    timeout_ms: int = 5000
    tls_verify: bool = True
    ca_file: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    token_counts: Literal["auto", "endpoint", "vocab", "estimate"] = "auto"


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    completion: CompletionConfig = field(default_factory=CompletionConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    speculative: SpeculativeConfig = field(default_factory=SpeculativeConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)


def _strict(kind: type):
    def hook(value: Any, _type: type) -> Any:
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__} {value!r}")
        return value

    return hook


_converter = cattrs.Converter(forbid_extra_keys=True)
for _kind in (bool, int, float, str):
    _converter.register_structure_hook(_kind, _strict(_kind))


def _fim_template(value: Any, _type: Any) -> str | FimStrings:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _converter.structure(value, FimStrings)
    raise TypeError(f"expected a family name or a table of strings, got {value!r}")


_converter.register_structure_hook_func(lambda t: t == (str | FimStrings), _fim_template)


def _merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _describe(exc: Exception) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        lines = cattrs.transform_error(exc, path="config")
        return "; ".join(lines)
    return str(exc)


def apply(config: Config, layer: dict[str, Any] | None, source: str) -> Config:
    """A new Config with ``layer`` merged over ``config``; raises ConfigError naming the key."""
    if not layer:
        return config
    if not isinstance(layer, dict):
        raise ConfigError(f"{source}: expected a table of settings, got {type(layer).__name__}")
    merged = _merge(_converter.unstructure(config), layer)
    try:
        return _converter.structure(merged, Config)
    except Exception as exc:  # cattrs wraps every failure
        raise ConfigError(f"{source}: {_describe(exc)}") from exc


def default_config_path() -> Path | None:
    """``$LSP_CODER_CONFIG``, else the XDG config file if it exists."""
    explicit = os.environ.get("LSP_CODER_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    candidate = Path(base) / "lsp-coder" / "config.toml"
    return candidate if candidate.is_file() else None


def load_file(path: Path | None) -> Config:
    """Defaults with the TOML file at ``path`` merged over them (no file: defaults)."""
    if path is None:
        return Config()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return apply(Config(), data, str(path))


def to_dict(config: Config) -> dict[str, Any]:
    return _converter.unstructure(config)
