"""The config's sections: one frozen record each, every field with its default (and, where
llama.cpp or sense needs one, the range its value must lie in).

``Config`` is the whole tree; ``config.example.toml`` shows it as TOML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


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
    read_aside: Literal["auto", "true", "false"] = "auto"


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
    min_confidence: float = _ranged(0.5, 0.0, 1.0)  # hide a typed-for answer below it


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
    draft_model: bool | Literal["auto"] = "auto"
    """Load the draft model (``model.draft_path``): true, false, or "auto": only where the
    target's measured batch costs let a draft pay (``engine/costs.draft_can_pay``)."""
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
    cold_prompt_front: bool = True
    """The short prompt starts with what the cache holds of the full prompt's front (the
    other files, or the part of them it holds; the file's lines above the short window),
    then the short window."""
    cold_prompt_imports: bool = True
    """The short prompt keeps the open file's import statements that bind a name its window's
    lines use (with the lines that open the cursor's scopes, at the window's front)."""
    cursor_prompt: Literal["front", "full", "request"] = "full"
    """What a cursor come to rest reads: "full" the full prompt there from its front;
    "front" first the short prompt with the full prompt's front up to its window and
    ``cursor_front_tokens`` of the window (what a request after the pause reads), then the
    full prompt; "request" the prompt a request would read now, then the full one."""
    cursor_front_tokens: int = _ranged(0, 0, MAX_TOKENS_ANY)
    """With ``cursor_prompt = "front"``: of the full prompt's window, the front keeps its
    first this many tokens (cut after a line's end; more when the cache holds more)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextConfig:
    """Code from beyond the open file, put first in the prompt (the other files' section)."""

    budget_tokens: int = _ranged(512, 0, MAX_TOKENS_ANY)
    """Tokens of the other files' section; 0: none (was ``completion.extra_context_tokens``)."""
    definitions: bool = True
    """The definitions of the imported names used around the cursor."""
    unused_imports: bool = True
    """Also the definitions of names the open file imports and does not use yet (JavaScript,
    TypeScript; at most 3, after those of the names at the cursor): the line being typed is
    often a name's first use (Python's lines lost with it, so Python has none)."""
    known_members: bool = True
    """After the dot of a name the open file imports from the workspace (a Python module; a
    JavaScript or TypeScript namespace import, enum or object literal), the model writes only
    names it offers, where all of them are known (the in-process model's greedy answers; a
    serving engine is not told)."""
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
    relevant_last: bool = False
    """The other files' section with its most relevant code last, nearest the open file (the
    definitions of the names at the cursor after the similar windows), as some
    repository-level evaluations place it; off: the most relevant first. Pinned code stays
    first either way. The short prompt for a cold cache keeps the section's front, which is
    then its least relevant part, and a section that grows changes its front (the prompt is
    read again from there) where it otherwise grows at its end."""
    second_pass: bool = False
    """A second pass by the names of the first answer (RepoCoder's): when the first answer
    uses a name whose definition the section did not show, the section adds it and the model
    answers again (the cursor often sits before the name it needs, which only the answer
    names). A request that finds something new costs a second prompt read and decode."""
    recent_edits: bool = True
    """The user's last finished edits (a save, typing leaving the line, a pause, another
    document), each changed region as it is now, after the other files' section."""
    recent_edits_max: int = _ranged(8, 1, 64)
    """Most changed regions shown (the newest)."""
    recent_edits_tokens: int = _ranged(384, 0, 8192)
    """Tokens of recent edits, on top of ``budget_tokens``; 0: none."""
    visited_ranges: bool = False
    """The lines around where the cursor last rested in other documents (a visit counts once
    the cursor leaves for another document or far away), after the other files' section
    (off: after a go-to-definition it gained nothing on top of the section, ``bench crossfile
    --visit``)."""
    visited_ranges_max: int = _ranged(4, 1, 16)
    """Most visited ranges shown (the newest)."""
    visited_ranges_tokens: int = _ranged(256, 0, 4096)
    """Tokens of visited ranges, on top of ``budget_tokens`` and ``recent_edits_tokens``; 0:
    none."""
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
