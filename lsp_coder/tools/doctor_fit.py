"""``lsp-coder doctor``'s advice on models: the largest preset this machine holds, and how to
build llama.cpp for its GPU."""

from __future__ import annotations

import platform
import shutil
from dataclasses import dataclass

from ..model_registry import PRESETS, Preset

OVERHEAD_BYTES = 768 << 20
"""Compute buffers, the draft's KV and the process itself, beyond weights and the target's KV
(llama.cpp reports 100-400 MiB of compute buffers for these models at n_ubatch 512)."""

RECOMMENDED = tuple(p for p in PRESETS if p.name.startswith("qwen2.5-coder-"))
"""The presets doctor chooses among: Qwen2.5-Coder, the better FIM family at each size."""

PIP = "pip install --force-reinstall --no-cache-dir llama-cpp-python==0.3.36"
GPU_BUILDS = (
    ("CUDA (NVIDIA)", f'CMAKE_ARGS="-DGGML_CUDA=on" {PIP}'),
    ("Metal (Apple Silicon)", f'CMAKE_ARGS="-DGGML_METAL=on" {PIP}'),
    ("Vulkan (AMD, Intel, NVIDIA)", f'CMAKE_ARGS="-DGGML_VULKAN=on" {PIP}'),
)


@dataclass(frozen=True, slots=True)
class Machine:
    """What a model can use here."""

    ram_free: int  # bytes of memory available now
    gpu_name: str | None  # the largest GPU llama.cpp can offload to, if this build has one
    gpu_free: int  # its free bytes (0 without one)


def needed_bytes(preset: Preset, n_ctx: int) -> int:
    """Memory to run ``preset`` with ``n_ctx`` cells of KV: weights, KV, overhead."""
    return preset.approx_bytes + preset.kv_bytes_per_token * n_ctx + OVERHEAD_BYTES


def recommend(machine: Machine, n_ctx: int) -> tuple[Preset | None, str]:
    """The largest recommended preset that fits, and where (``"GPU"`` or ``"RAM"``)."""
    for where, free in (("GPU", machine.gpu_free), ("RAM", machine.ram_free)):
        fitting = [p for p in RECOMMENDED if needed_bytes(p, n_ctx) <= free]
        if fitting:
            return max(fitting, key=lambda p: p.approx_bytes), where
    return None, "RAM"


def this_machine(gpu_build: bool) -> Machine:
    import psutil

    from ..engine.llama_system import devices

    ram = psutil.virtual_memory().available
    gpus = [d for d in devices() if d.gpu] if gpu_build else []
    best = max(gpus, key=lambda d: d.free, default=None)
    return Machine(ram, best.description or best.name if best else None,
                   best.free if best else 0)


def fit_report(n_ctx: int, n_gpu_layers: int, gpu_build: bool) -> list[str]:
    """doctor's lines: memory here, the preset to use, how to get a GPU build if useful."""
    machine = this_machine(gpu_build)
    gb = 1e9
    lines = [f"memory here {machine.ram_free / gb:.1f} GB RAM available"
             + (f"; GPU {machine.gpu_name}: {machine.gpu_free / gb:.1f} GB free"
                if machine.gpu_name else "")]
    preset, where = recommend(machine, n_ctx)
    if preset is None:
        lines.append(f"largest fit none of the presets fits in {machine.ram_free / gb:.1f} GB"
                     f" at n_ctx {n_ctx}: keep the embedded model, or lower model.n_ctx")
    else:
        need = needed_bytes(preset, n_ctx) / gb
        hint = ("; set model.n_gpu_layers = -1 to offload it all" if where == "GPU"
                and n_gpu_layers == 0 else "")
        lines.append(f"largest fit {preset.name} (about {need:.1f} GB in {where} at n_ctx"
                     f" {n_ctx}): lsp-coder model use {preset.name}{hint}")
        if where == "RAM":
            lines.append("            on a CPU a larger model answers each key more slowly:"
                         " lsp-coder bench typing measures it")
    if not gpu_build:
        present = _gpu_present()
        lead = (f"{present} found but this llama.cpp is CPU-only" if present
                else "this llama.cpp is CPU-only")
        lines.append(f"GPU build   {lead}; for a GPU, rebuild it (several minutes):")
        lines += [f"              {name}: {command}" for name, command in GPU_BUILDS]
    return lines


def _gpu_present() -> str | None:
    """A GPU this machine seems to have, from its tools, or None."""
    if shutil.which("nvidia-smi"):
        return "an NVIDIA GPU (nvidia-smi)"
    if platform.system() == "Darwin" and platform.machine() == "arm64":
        return "Apple Silicon (Metal)"
    if shutil.which("vulkaninfo"):
        return "a Vulkan driver (vulkaninfo)"
    return None
