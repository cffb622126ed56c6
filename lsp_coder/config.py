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
import re
import tomllib
import urllib.parse
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

import cattrs


class ConfigError(ValueError):
    """A config layer has a value of the wrong type or out of range, or an unknown key; the
    message names each key, its value and what is expected.

    ``usable``: the layer applied without them (each bad key keeps its previous value, each
    unknown key is left out); None only for a file that cannot be read at all.
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
    prompt: Literal["auto", "text"] = "auto"
    """How the prompt goes: "auto", as token ids where the engine takes them (control tokens
    only where lsp-coder puts them), else as text; "text": always as text (control-token text
    in user content broken)."""


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
    cold_prompt_front: bool = False
    """The short prompt starts with what the cache holds of the full prompt's front (the
    other files, the file's lines above the short window), then the short window."""
    cursor_full: bool = False
    """A cursor come to rest reads the full prompt there (False: the prompt a request
    would read, the short one on a cold cache, then the full)."""


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
    exclude: list[str] = field(default_factory=list)
    """Files that never reach the model, as gitignore patterns matched against paths relative
    to the workspace folder (``.gitignore``, ``.git/info/exclude`` and ``.lspcoderignore``
    are honored too); an excluded open document gets no completion."""
    recent_edits: bool = True
    """The user's last finished edits (a save, typing leaving the line, a pause, another
    document), each changed region as it is now, after the other files' section."""
    recent_edits_max: int = _ranged(8, 1, 64)
    """Most changed regions shown (the newest)."""
    recent_edits_tokens: int = _ranged(384, 0, 8192)
    """Tokens of recent edits, on top of ``budget_tokens``; 0: none."""
    pinned: list[str] = field(default_factory=list)
    """Code always put first in the other files' section, each entry a path to show, a newline,
    then the text, never cut; it counts against ``budget_tokens`` (2 characters a token) before
    the sources (``bench crossfile``'s
    ``+oracle`` runs put the true definition of the line's name here)."""
    ignore_files: bool = True
    """Honor ``.gitignore``, ``.git/info/exclude`` and ``.lspcoderignore`` as exclusions (off:
    only ``exclude`` and the files that hold secrets keep files from the model; the workspace
    index still skips what a ``.gitignore`` names when it walks, as it skips vendored
    folders)."""


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


def _strings(value: Any, _type: Any) -> list[str]:
    """A list of strings, as given (a string is not taken for a list of its characters)."""
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise TypeError(f"expected a list of strings, got {value!r}")
    return list(value)


_converter.register_structure_hook_func(lambda t: t == list[str], _strings)


PROBLEMS_SHOWN = 8
"""One message names at most this many bad keys, and as many unknown ones; the rest are
counted."""

VALUE_SHOWN_CHARS = 60
"""A value or key named in a message is cut to this many characters."""

_SECTIONS: dict[str, type] = {f.name: f.default_factory for f in fields(Config)}
"""The config's sections by name (each a dataclass)."""


def _shown(value: Any) -> str:
    """``value`` for a message: its repr, cut short."""
    return _cut(repr(value))


def _cut(text: str) -> str:
    return text if len(text) <= VALUE_SHOWN_CHARS else text[: VALUE_SHOWN_CHARS - 3] + "..."


def _key(key: Any) -> str:
    """A key for a message: as written when it is a string, cut short."""
    return _cut(key) if isinstance(key, str) else _shown(key)


def _expected(hint: Any) -> str:
    """What a value of type ``hint`` must be, in words."""
    if get_origin(hint) is Literal:
        return "one of " + ", ".join(repr(v) for v in get_args(hint))
    if hint == (str | FimStrings):
        return ("a family name or a table of prefix, suffix, middle, file_sep and repo_name"
                " strings")
    if get_origin(hint) is dict:
        return "a table of strings"
    if get_origin(hint) is list:
        return "a list of strings"
    return {bool: "true or false", int: "a whole number", float: "a number",
            str: "a string"}.get(hint, str(hint))


HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP header name (RFC 9110's token)."""


def _header_problems(headers: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The headers that can be sent, and what is wrong with the others: a name that is not
    a token, a value with a line break or another control character (it would end the header
    and start another: header injection)."""
    kept: dict[str, str] = {}
    problems: list[str] = []
    for name, value in headers.items():
        if not HEADER_NAME.fullmatch(name):
            problems.append(f"backend.headers key {_shown(name)}: a header name is letters,"
                            " digits and !#$%&'*+-.^_`|~ only; header left out")
        elif any(ord(c) < 32 and c != "\t" or ord(c) == 127 for c in value):
            problems.append(f"backend.headers.{name} = {_shown(value)}: a header value may not"
                            " hold a line break or a control character; header left out")
        else:
            kept[name] = value
    return kept, problems


def _take(merged: dict[str, Any], config: Config, layer: dict[str, Any]
          ) -> tuple[list[str], list[str]]:
    """Put the good values of ``layer`` into ``merged`` (``config`` unstructured), key by
    key; returns the problems (a value of the wrong type, named with what was expected and
    what is kept) and the unknown keys, which are left out."""
    problems: list[str] = []
    unknown: list[str] = []
    for name, section_layer in layer.items():
        cls = _SECTIONS.get(name)
        if cls is None:
            unknown.append(_key(name))
            continue
        if not isinstance(section_layer, dict):
            problems.append(f"{name} = {_shown(section_layer)}: expected a table of settings")
            continue
        hints = get_type_hints(cls)
        for key, value in section_layer.items():
            hint = hints.get(key) if isinstance(key, str) else None
            if hint is None:
                unknown.append(f"{name}.{_key(key)}")
                continue
            before = getattr(getattr(config, name), key)
            try:
                _converter.structure(value, hint)
            except Exception:  # cattrs wraps every failure
                problems.append(f"{name}.{key} = {_shown(value)}: expected {_expected(hint)};"
                                f" keeping {_shown(before)}")
                continue
            if isinstance(value, dict) and isinstance(merged[name].get(key), dict):
                value = {**merged[name][key], **value}  # a table merges key by key
            if (name, key) == ("backend", "headers"):
                value, bad = _header_problems(value)
                problems += bad
            merged[name][key] = value
    return problems, unknown


def _message(source: str, problems: list[str], unknown: list[str]) -> str:
    """One message for a layer's problems and unknown keys, at most ``PROBLEMS_SHOWN`` of
    each named."""
    parts = problems[:PROBLEMS_SHOWN]
    if len(problems) > PROBLEMS_SHOWN:
        parts.append(f"and {len(problems) - PROBLEMS_SHOWN} more bad values")
    if unknown:
        named = ", ".join(unknown[:PROBLEMS_SHOWN])
        more = (f" and {len(unknown) - PROBLEMS_SHOWN} more"
                if len(unknown) > PROBLEMS_SHOWN else "")
        word = "key" if len(unknown) == 1 else "keys"
        parts.append(f"unknown {word} {named}{more} ignored")
    return f"{source}: {'; '.join(parts)}"


def apply(config: Config, layer: dict[str, Any] | None, source: str) -> Config:
    """A new Config with ``layer`` merged over ``config``.

    A bad value costs only its own key: a wrong type, a value out of range or a broken
    relation keeps that key's value from ``config``; an unknown key is left out; the rest of
    the layer applies. Then ConfigError is raised naming each (key, value, what is expected),
    with the config to use as ``usable``.
    """
    if not layer:
        return config
    if not isinstance(layer, dict):
        raise ConfigError(f"{source}: expected a table of settings, got {type(layer).__name__}",
                          usable=config)
    merged = _converter.unstructure(config)
    problems, unknown = _take(merged, config, _renamed(layer))
    new = _converter.structure(merged, Config)
    usable, more = _check_ranges(new, config)
    problems += more
    usable, more = _check_relations(usable, config)
    problems += more
    usable, more = _check_url(usable, config)
    problems += more
    if problems or unknown:
        raise ConfigError(_message(source, problems, unknown), usable=usable)
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


def _merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


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
