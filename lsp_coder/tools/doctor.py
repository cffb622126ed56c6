"""``lsp-coder doctor``: what model would run, with which template, memory and CPU/GPU setup."""

from __future__ import annotations

import logging
import os
import re
import sys

from ..backends.factory import COSTS_FILE
from ..backends.local_prompt import resolve_layout
from ..completion.service import CompletionService
from ..config import Config
from ..engine.llama_system import build_has_amx, gpu_offload_supported, system_info
from .doctor_fit import fit_report
from .progress_bar import load_with_bar

LAYOUT_NAMES = {"psm": "prefix-suffix-middle", "spm": "suffix-prefix-middle"}

_BUFFER = re.compile(r"(\w+) compute buffer size\s*=\s*([\d.]+) MiB")


class _ComputeBuffers(logging.Handler):
    """Collects llama.cpp's own report of its compute buffer sizes while a model loads."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.mib = 0.0

    def emit(self, record: logging.LogRecord) -> None:
        match = _BUFFER.search(record.getMessage())
        if match:
            self.mib += float(match.group(2))


def _mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def doctor(config: Config) -> int:
    print(f"python      {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    if config.backend.kind != "local":
        from .doctor_remote import doctor_remote

        return doctor_remote(config)
    info = system_info()
    print(f"llama.cpp   {info.strip()}")
    amx = build_has_amx()
    setting = config.model.use_extra_bufts
    print(f"AMX kernels {'built in' if amx else 'not built'}; model.use_extra_bufts = {setting}")
    if amx and setting == "auto":
        print("            safe: extra buffer types (AMX, repack) are off because ggml's AMX"
              " kernel crashes on some CPUs; a build without AMX keeps the faster repack"
              " kernels: see docs/models.md 'CPU builds and AMX'")
    gpu = gpu_offload_supported()
    print(f"GPU offload {'supported' if gpu else 'not in this build'};"
          f" n_gpu_layers = {config.model.n_gpu_layers}")
    if config.model.n_gpu_layers and not gpu:
        print("            n_gpu_layers is set but this build is CPU-only: layers stay on the CPU")
    for line in fit_report(config.model.n_ctx, config.model.n_gpu_layers, gpu):
        print(line)

    collector = _ComputeBuffers()
    llama_log = logging.getLogger("lsp_coder.engine.llama")
    llama_log.addHandler(collector)
    previous = llama_log.level, llama_log.propagate
    llama_log.setLevel(logging.DEBUG)
    llama_log.propagate = False
    service = CompletionService(config)
    try:
        error = load_with_bar(service)
    finally:
        llama_log.removeHandler(collector)
        llama_log.setLevel(previous[0])
        llama_log.propagate = previous[1]
    if error:
        print(f"model       {error}")
        return 1
    d = service.describe()
    print(f"model       {d['model']} ({d['description']})")
    fim = d["fim"]
    if fim:
        setting = config.completion.fim_layout
        layout = resolve_layout(setting, d["architecture"])
        print(f"FIM         {fim['prefix']} … {fim['suffix']} … {fim['middle']}"
              f" (end: {fim['eot']}), {LAYOUT_NAMES[layout]} layout"
              f" (completion.fim_layout = {setting})")
    else:
        print("FIM         none: prefix-only completion")
    print(f"draft       {d['draft'] or d.get('draft_left_out') or 'none'}")
    where = ("plain weights beside the repacked ones (model.read_aside)" if d.get("read_aside")
             else "the weights the model decodes on")
    print(f"prompts     read on {where}")
    plain = d.get("read_aside_weights_bytes", 0)
    weights = d["weights_bytes"] + d["draft_weights_bytes"] + plain
    kv = d["kv_bytes"] + d["draft_kv_bytes"] + d.get("read_aside_kv_bytes", 0)
    compute = collector.mib * 2**20
    held = f" ({_mib(plain)} of them plain, to read prompts on)" if plain else ""
    print(f"memory      weights {_mib(weights)}{held} + KV {_mib(kv)} at n_ctx {d['n_ctx']}"
          f" ({d['kv_bytes_per_token']} B/token) + compute {_mib(compute)}"
          f" = {_mib(weights + kv + compute)}")
    costs = "; ".join(f"{name} {how}" for name, how in d["batch_costs"].items())
    print(f"costs       batch costs of {costs} ({COSTS_FILE} in the cache folder)")
    print(f"cache       {d['n_seq_max']} sequences over one unified KV; shift"
          f" {'supported' if d['can_shift'] else 'not supported'}")
    for warning in d["warnings"]:
        print(f"warning     {warning}")
    service.close()
    print("status      ok: the model loads and the setup is safe")
    return 0
