"""Models one command away: the presets ``lsp-coder model`` knows, and any ``owner/repo/file.gguf``.

Each preset is a FIM-trained base model and the draft model that fits it, as GGUF files on the
Hugging Face Hub pinned to a commit. Where the file's sha256 and size were verified from the
hub's own pages they are pinned here too; where they were not, the download is checked against
what the hub itself reports for that commit (its ``X-Linked-Etag``, the sha256 of an LFS file,
and ``X-Linked-Size``), and docs/models.md says which facts those are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMIT = re.compile(r"[0-9a-f]{40}")
SHA256 = re.compile(r"[0-9a-f]{64}")

DEFAULT_NAME = "default"
"""The embedded model (Qwen2.5-Coder-1.5B-Instruct with its 0.5B draft, from the model extra)."""


class UnknownModel(ValueError):
    """A model name that is neither a preset nor ``owner/repo/file.gguf``; says what is."""


@dataclass(frozen=True, slots=True)
class HubFile:
    """One GGUF file in a Hugging Face Hub model repository."""

    repo: str  # "owner/name"
    filename: str  # path inside the repository
    revision: str = "main"  # a 40-hex commit for presets; a branch or tag for names typed in
    size: int | None = None  # bytes, when verified; else the hub's X-Linked-Size is trusted
    sha256: str | None = None  # when verified; else the hub's LFS etag is the expected digest

    @property
    def spec(self) -> str:
        """How a person names this file: ``owner/name/file.gguf``."""
        return f"{self.repo}/{self.filename}"

    @property
    def pinned(self) -> bool:
        """The revision is a commit, so the file can never change under this name."""
        return COMMIT.fullmatch(self.revision) is not None


@dataclass(frozen=True, slots=True)
class Preset:
    """A target model and the draft that fits it, with what they need to run."""

    name: str  # what `lsp-coder model use NAME` takes
    description: str  # one line for `model list`
    target: HubFile  # the FIM model
    draft: HubFile | None  # same vocabulary, for speculative decoding; None: free drafters only
    approx_bytes: int  # target + draft file sizes, for memory estimates before a download
    kv_bytes_per_token: int  # the target's F16 KV: 2 * layers * kv_heads * head_dim * 2 bytes


_QWEN_DRAFT = HubFile(
    "ggml-org/Qwen2.5-Coder-0.5B-Q8_0-GGUF", "qwen2.5-coder-0.5b-q8_0.gguf",
    "ecdd60b1c25ab158bec6e1ab084aeebf9eae0af4", 531_068_128,
    "d0f8cd6c49bab52a0abdbe47948518b1f4d9b1a8a2a6825099cea31cea10ac56")

# NOTE: Qwen2.5-Coder 0.5B/1.5B/3B have 151936 tokens and 7B/14B 152064: 128 apart, which
# llama.cpp's draft check (and ours) still accepts, so the 0.5B drafts for every size, as in
# llama.cpp's own --fim-qwen-7b-spec and --fim-qwen-14b-spec.
PRESETS: tuple[Preset, ...] = (
    Preset("qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B base Q8_0; no smaller draft exists",
           _QWEN_DRAFT, None, 531_068_128, 2 * 24 * 2 * 64 * 2),
    Preset("qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B base Q8_0, 0.5B draft",
           HubFile("ggml-org/Qwen2.5-Coder-1.5B-Q8_0-GGUF", "qwen2.5-coder-1.5b-q8_0.gguf",
                   "8be1b8a895a84beea772817caaa71eba6b6e0d07", 1_646_573_056,
                   "29871c94d15727a6e243f79a37113d4ae625a6215b5e800bf41a23af2da32832"),
           _QWEN_DRAFT, 2_177_641_184, 2 * 28 * 2 * 128 * 2),
    Preset("qwen2.5-coder-3b", "Qwen2.5-Coder-3B base Q8_0, 0.5B draft",
           HubFile("ggml-org/Qwen2.5-Coder-3B-Q8_0-GGUF", "qwen2.5-coder-3b-q8_0.gguf",
                   "9c1de162ae417c9c3aacde97c729c4128de047d8", 3_285_476_160,
                   "a522a906e299ed34db738b9626b2cd0da9e446c14674468a22fc2eae3dbd344d"),
           _QWEN_DRAFT, 3_816_544_288, 2 * 36 * 2 * 128 * 2),
    Preset("qwen2.5-coder-7b", "Qwen2.5-Coder-7B base Q8_0, 0.5B draft",
           HubFile("ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF", "qwen2.5-coder-7b-q8_0.gguf",
                   "bca77e0a8c88fc224882bcc404170c3ef17efacc", 8_098_525_600,
                   "0ef48dc94a3c551a6736ac2601de38413dc9aa9318534b16e8baee08290a4aaf"),
           _QWEN_DRAFT, 8_629_593_728, 2 * 28 * 4 * 128 * 2),
    Preset("qwen2.5-coder-14b", "Qwen2.5-Coder-14B base Q8_0, 0.5B draft",
           HubFile("lmstudio-community/Qwen2.5-Coder-14B-GGUF", "Qwen2.5-Coder-14B-Q8_0.gguf",
                   "d859d9d40f964bd4c0f88a6861bd7e5c5cdcc853", None,
                   "3d2abf8f771767667ff66cc10a5db27421b8f0891d8af42b7c18eba8b5c33eec"),
           _QWEN_DRAFT, 16_240_000_000, 2 * 48 * 8 * 128 * 2),
    Preset("codellama-7b", "CodeLlama-7B base Q4_K_M, TinyLlama-1.1B (3T) Q4_K_M draft",
           HubFile("TheBloke/CodeLlama-7B-GGUF", "codellama-7b.Q4_K_M.gguf",
                   "d98e99bda7dd4c3e26dc0b44adcdb7f6581b9a72", None,
                   "c3866cb985de17d398c2d7e85bb8a9c717a76bb997dce0e72a0cb169063e6d17"),
           HubFile("TheBloke/TinyLlama-1.1B-intermediate-step-1431k-3T-GGUF",
                   "tinyllama-1.1b-intermediate-step-1431k-3t.Q4_K_M.gguf",
                   "0036de25ae06ab5d86155060eb41831b789baaaf", 668_787_712,
                   "83555729fb964fe56b0b3fc44f3c68272f3518600a6e15bc499ea8ffc7f89e38"),
           4_750_000_000, 2 * 32 * 32 * 128 * 2),
)

_BY_NAME = {p.name: p for p in PRESETS}


def preset_names() -> list[str]:
    return [p.name for p in PRESETS]


def find(name: str, revision: str | None = None) -> Preset | HubFile:
    """The preset called ``name``, or the hub file it spells (``owner/repo/path/file.gguf``,
    optionally ``@revision`` at the end or ``revision`` given apart).

    Raises:
        UnknownModel: neither; the message lists the presets.
    """
    preset = _BY_NAME.get(name.strip().lower())
    if preset is not None:
        if revision:
            raise UnknownModel(f"{name} is a preset pinned to its own revision; --revision is"
                               " for owner/repo/file.gguf names")
        return preset
    spec, _, at = name.strip().partition("@")
    parts = [p for p in spec.split("/") if p]
    if len(parts) < 3 or not parts[-1].lower().endswith(".gguf") or any(
            p in (".", "..") for p in parts):
        raise UnknownModel(
            f"unknown model {name!r}: use a preset ({', '.join(preset_names())}), "
            f"{DEFAULT_NAME!r} for the embedded model, or a file on the Hugging Face Hub as "
            "owner/repo/file.gguf")
    return HubFile("/".join(parts[:2]), "/".join(parts[2:]), revision or at or "main")


def files_of(model: Preset | HubFile) -> tuple[HubFile, HubFile | None]:
    """The target and the draft (or None) a name stands for."""
    if isinstance(model, Preset):
        return model.target, model.draft
    return model, None
