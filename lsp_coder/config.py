"""One typed configuration tree.

Precedence, lowest first: the defaults below < a TOML file (``--config PATH``,
``$LSP_CODER_CONFIG`` or ``$XDG_CONFIG_HOME/lsp-coder/config.toml``) < the client's
``initializationOptions`` < ``workspace/didChangeConfiguration``. Every level is the same tree as
``config.example.toml``; a layer is merged key by key over the one below it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tomllib
import urllib.parse
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

import cattrs


class ConfigError(ValueError):
    """A config layer has a wrong type, an unknown key or a value out of range; the message
    names the key.

    ``usable`` is set when only values were out of range: the layer applied with each of those
    keys left at its previous value.
    """

    def __init__(self, message: str, usable: Config | None = None) -> None:
        super().__init__(message)
        self.usable = usable


def _ranged(default: int | float, low: int | float, high: int | float) -> Any:
    """A field whose value must lie in ``[low, high]`` (checked before it reaches llama.cpp)."""
    return field(default=default, metadata={"range": (low, high)})


# llama.cpp's limits, found by trying them on a model (tests/unit/engine/test_llama_limits.py):
# it aborts the process (GGML_ASSERT n_outputs_max) unless n_ctx and n_batch are at least
# n_seq_max, and refuses more than 256 sequences. n_ctx >= 256 >= n_seq_max always holds.
MIN_N_CTX = 256
MAX_N_SEQ = 256
MAX_TOKENS_ANY = 1 << 20


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelConfig:
    path: str = ""
    draft_path: str = ""
    n_ctx: int = _ranged(8192, MIN_N_CTX, MAX_TOKENS_ANY)
    n_batch: int = _ranged(512, 1, 1 << 16)  # and at least n_seq_max
    n_ubatch: int = _ranged(512, 1, 1 << 16)
    n_seq_max: int = _ranged(8, 1, MAX_N_SEQ)
    n_threads: int = _ranged(0, 0, 1024)
    n_gpu_layers: int = _ranged(0, -1, 100_000)
    use_mlock: bool = False
    use_mmap: bool = True
    use_extra_bufts: Literal["auto", "true", "false"] = "auto"


@dataclass(frozen=True, kw_only=True, slots=True)
class CompletionConfig:
    max_tokens: int = _ranged(96, 1, 4096)  # and at most half the KV cache
    max_lines: int = _ranged(8, 1, 10_000)
    temperature: float = _ranged(0.0, 0.0, 5.0)
    seed: int = _ranged(0, 0, 2**32 - 1)
    debounce_ms: int = _ranged(150, 0, 10_000)
    prefix_tokens: int = _ranged(1024, 16, MAX_TOKENS_ANY)
    suffix_tokens: int = _ranged(256, 0, MAX_TOKENS_ANY)
    fim_layout: Literal["auto", "psm", "spm"] = "auto"
    recent_lines: int = _ranged(0, 0, 64)
    inline_budget_ms: int = _ranged(1500, 0, 600_000)
    completion_budget_ms: int = _ranged(1500, 0, 600_000)
    alternatives: int = _ranged(2, 0, 8)  # sampled for an inline request the user invoked


@dataclass(frozen=True, kw_only=True, slots=True)
class CacheConfig:
    reuse: bool = True
    block_size: int = _ranged(32, 4, 1024)
    kv_budget_tokens: int = _ranged(0, 0, MAX_TOKENS_ANY)
    shift_reuse: bool = False
    shift_min_tokens: int = _ranged(64, 1, MAX_TOKENS_ANY)


@dataclass(frozen=True, kw_only=True, slots=True)
class SpeculativeConfig:
    enabled: bool = True
    draft_model: bool = True
    ngram: bool = True
    previous_suggestion: bool = True
    greedy_memory: bool = True
    max_draft: int = _ranged(8, 1, 64)
    p_min: float = _ranged(0.5, 0.0, 1.0)


@dataclass(frozen=True, kw_only=True, slots=True)
class FimStrings:
    """An explicit FIM template as text (``backend.fim_template = {prefix = ..., ...}``)."""

    prefix: str = ""
    suffix: str = ""
    middle: str = ""
    file_sep: str = ""
    repo_name: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class BackendConfig:
    """Where completions are computed: in this process, or on a shared serving engine."""

    kind: Literal["local", "llama-server", "openai", "ollama"] = "local"
    url: str = ""
    model: str = ""
    fim_template: str | FimStrings = "auto"
    api_key_env: str = ""
    timeout_ms: int = _ranged(5000, 1, 600_000)
    stream_timeout_ms: int = _ranged(20_000, 1, 3_600_000)
    tls_verify: bool = True
    ca_file: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    token_counts: Literal["auto", "endpoint", "vocab", "estimate"] = "auto"


@dataclass(frozen=True, kw_only=True, slots=True)
class IdleConfig:
    """Work done between keystrokes: prefilling the prompts the next request will probably need."""

    enabled: bool = True
    start_after_ms: int = _ranged(100, 0, 60_000)
    chunk_tokens: int = _ranged(64, 1, 4096)
    window: bool = True
    prefetch: bool = True
    take_prefetch: bool = True
    remote: bool = False
    cold_prompt_ms: int = _ranged(1500, 0, 600_000)
    cold_prompt_tokens: int = _ranged(384, 0, MAX_TOKENS_ANY)
    cold_context_tokens: int = _ranged(512, 0, MAX_TOKENS_ANY)
    """Of the other files' section, the short prompt keeps at most its first this many tokens
    (cut after a line's end); the full prompt read later reuses them."""
    cold_context_first: bool = False
    """The first answers in a file just opened wait for the short prompt with the section
    (False: they come from the one without while idle work reads it)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextConfig:
    """Code from beyond the open file, put first in the prompt (the other files' section)."""

    budget_tokens: int = _ranged(512, 0, MAX_TOKENS_ANY)
    """Tokens of the other files' section; 0: none (was ``completion.extra_context_tokens``)."""
    definitions: bool = True
    """The definitions of the imported names used around the cursor."""
    open_files: bool = True
    """Chunks of open and recently edited documents that share identifiers with the cursor's."""
    imports: bool = True
    """The open file's import lines at the front of its window when the window starts below
    them (Python, JavaScript, TypeScript, C, C++)."""
    workspace: bool = True
    """Index the workspace folders in the background (definitions of other languages, files
    not open)."""
    max_files: int = _ranged(5000, 0, 1_000_000)
    """Most workspace files indexed (the rest are not read)."""
    max_file_bytes: int = _ranged(262_144, 0, 1 << 30)
    """A workspace, defining or nearby file larger than this is not read (nor an open
    document scanned for windows of itself)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerConfig:
    """How the editor's ``lsp-coder`` process serves: one model shared by every editor, or its
    own."""

    shared: bool = True
    """Over stdio, forward to the user's shared server (one model for every editor), starting
    it when none runs; False: load the model in this process (``--no-shared``)."""
    idle_exit_s: int = _ranged(300, 0, 86_400)
    """The shared server exits this many seconds after its last editor left."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    server: ServerConfig = field(default_factory=ServerConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    completion: CompletionConfig = field(default_factory=CompletionConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    speculative: SpeculativeConfig = field(default_factory=SpeculativeConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    idle: IdleConfig = field(default_factory=IdleConfig)
    context: ContextConfig = field(default_factory=ContextConfig)


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
    merged = _merge(_converter.unstructure(config), _renamed(layer))
    try:
        new = _converter.structure(merged, Config)
    except Exception as exc:  # cattrs wraps every failure
        raise ConfigError(f"{source}: {_describe(exc)}") from exc
    usable, problems = _check_ranges(new, config)
    usable, more = _check_relations(usable, config)
    problems += more
    usable, more = _check_url(usable, config)
    problems += more
    if problems:
        raise ConfigError(f"{source}: {'; '.join(problems)}", usable=usable)
    return new


def _renamed(layer: dict[str, Any]) -> dict[str, Any]:
    """``layer`` with keys of earlier versions put where they live now:
    ``completion.extra_context_tokens`` is ``context.budget_tokens`` (which wins if both are
    given)."""
    completion = layer.get("completion")
    if not (isinstance(completion, dict) and "extra_context_tokens" in completion):
        return layer
    completion = dict(completion)
    budget = completion.pop("extra_context_tokens")
    context = layer.get("context")
    context = dict(context) if isinstance(context, dict) else {}
    context.setdefault("budget_tokens", budget)
    return {**layer, "completion": completion, "context": context}


def _check_ranges(config: Config, previous: Config) -> tuple[Config, list[str]]:
    """``config`` with each out-of-range value put back to ``previous``'s, and what was wrong."""
    problems: list[str] = []
    sections: dict[str, Any] = {}
    for section in fields(config):
        value, before = getattr(config, section.name), getattr(previous, section.name)
        fixed: dict[str, Any] = {}
        for f in fields(value):
            if "range" not in f.metadata:
                continue
            low, high = f.metadata["range"]
            v = getattr(value, f.name)
            if not (math.isfinite(v) and low <= v <= high):
                problems.append(f"{section.name}.{f.name} = {v!r} is out of range"
                                f" (allowed: {low} to {high})")
                fixed[f.name] = getattr(before, f.name)
        if fixed:
            sections[section.name] = replace(value, **fixed)
    return replace(config, **sections), problems


def _check_relations(config: Config, previous: Config) -> tuple[Config, list[str]]:
    """Limits between keys; a broken one puts the keys involved back to ``previous``'s."""
    problems: list[str] = []
    mc, cc = config.model, config.completion
    if mc.n_batch < mc.n_seq_max:
        problems.append(f"model.n_batch = {mc.n_batch} must be at least model.n_seq_max ="
                        f" {mc.n_seq_max} (llama.cpp needs an output row per sequence)")
        mc = replace(mc, n_batch=previous.model.n_batch, n_seq_max=previous.model.n_seq_max)
    kv = min(config.cache.kv_budget_tokens or mc.n_ctx, mc.n_ctx)
    if cc.max_tokens > kv // 2:
        problems.append(f"completion.max_tokens = {cc.max_tokens} must be at most half the KV"
                        f" cache ({kv // 2}; model.n_ctx, cache.kv_budget_tokens)")
        cc = replace(cc, max_tokens=previous.completion.max_tokens)
        mc = replace(mc, n_ctx=previous.model.n_ctx)
        config = replace(config, cache=replace(
            config.cache, kv_budget_tokens=previous.cache.kv_budget_tokens))
    return replace(config, model=mc, completion=cc), problems


def url_problem(url: str) -> str:
    """What is wrong with a serving engine's URL ("" when it can be used)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        reason = str(exc)
        if "port" in reason.lower():
            return "the port must be a number from 1 to 65535"
        if "bracket" in reason or "IPv6" in reason:
            return "an IPv6 address needs both brackets: http://[::1]:8080"
        return "it is not a URL"
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    if port is not None and not 1 <= port <= 65535:
        return "the port must be a number from 1 to 65535"
    return ""


def redact_url(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@`` (for messages and logs)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    return f"{scheme}://***@{authority.rpartition('@')[2]}{slash}{path}"


def _check_url(config: Config, previous: Config) -> tuple[Config, list[str]]:
    """``[backend] url`` must be usable when set; a bad one puts back ``previous``'s."""
    url = config.backend.url
    problem = url_problem(url) if url else ""
    if not problem:
        return config, []
    return (replace(config, backend=replace(config.backend, url=previous.backend.url)),
            [f"[backend] url = {redact_url(url)!r}: {problem}"])


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


def to_dict(config: Config) -> dict[str, Any]:
    return _converter.unstructure(config)


MODEL_SECTIONS = ("model", "cache", "backend")
"""The sections whose settings choose the loaded model (with ``speculative.draft_model``):
sessions that differ in them cannot share one."""


def model_key(config: Config) -> str:
    """A short digest of the settings that choose the model and its cache: equal keys can share
    one loaded model (``[model]``, ``[cache]``, ``[backend]``, ``speculative.draft_model``)."""
    tree = to_dict(config)
    chosen = {name: tree[name] for name in MODEL_SECTIONS}
    chosen["draft_model"] = config.speculative.draft_model
    text = json.dumps(chosen, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def settings_layer(value: Any) -> Any:
    """The settings tree in a client's message: under a ``lsp-coder`` (or ``lspCoder``) key
    when there is one (``workspace/didChangeConfiguration`` sends a whole section), else the
    value itself."""
    if isinstance(value, dict):
        return value.get("lsp-coder", value.get("lspCoder", value))
    return value


def merge_layers(lower: dict[str, Any] | None, upper: dict[str, Any] | None) -> dict[str, Any]:
    """One layer holding ``upper`` merged key by key over ``lower`` (applying it equals
    applying both in turn)."""
    return _merge(lower if isinstance(lower, dict) else {},
                  upper if isinstance(upper, dict) else {})


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
