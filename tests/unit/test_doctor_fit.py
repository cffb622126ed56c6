"""doctor's model advice: the largest preset that fits, and the GPU builds."""

from __future__ import annotations

import psutil
import pytest

from lsp_coder.engine.llama_system import devices, gpu_offload_supported
from lsp_coder.tools.doctor_fit import Machine, fit_report, needed_bytes, recommend

GB = 1_000_000_000


@pytest.mark.parametrize("ram, gpu, expected, where", [
    (16 * GB, 0, "qwen2.5-coder-7b", "RAM"),  # the user with 16 GB
    (24 * GB, 0, "qwen2.5-coder-14b", "RAM"),
    (8 * GB, 0, "qwen2.5-coder-3b", "RAM"),
    (4 * GB, 0, "qwen2.5-coder-1.5b", "RAM"),
    (2 * GB, 0, "qwen2.5-coder-0.5b", "RAM"),
    (8 * GB, 24 * GB, "qwen2.5-coder-14b", "GPU"),  # a 24 GB card holds the 14B whole
    (32 * GB, 12 * GB, "qwen2.5-coder-7b", "GPU"),  # on the GPU when it fits there
])
def test_the_largest_preset_that_fits_is_recommended(ram, gpu, expected, where):
    preset, place = recommend(Machine(ram, "GPU" if gpu else None, gpu), n_ctx=8192)
    assert (preset.name, place) == (expected, where)
    assert needed_bytes(preset, 8192) <= (gpu if where == "GPU" else ram)


def test_nothing_fits_in_too_little_memory():
    assert recommend(Machine(GB // 2, None, 0), n_ctx=8192) == (None, "RAM")


def test_a_bigger_kv_cache_can_tip_a_preset_out():
    machine = Machine(18 * GB, None, 0)
    assert recommend(machine, n_ctx=2048)[0].name == "qwen2.5-coder-14b"
    assert recommend(machine, n_ctx=32768)[0].name == "qwen2.5-coder-7b"


def test_llama_cpp_reports_this_machines_devices():
    found = devices()
    cpu = [d for d in found if d.name == "CPU"]
    assert cpu and not cpu[0].gpu
    assert abs(cpu[0].total - psutil.virtual_memory().total) < 0.1 * cpu[0].total
    assert any(d.gpu for d in found) == gpu_offload_supported() or not gpu_offload_supported()


def test_the_report_names_memory_a_preset_and_how_to_build_for_a_gpu():
    gpu_build = gpu_offload_supported()
    lines = "\n".join(fit_report(8192, 0, gpu_build))
    assert "memory here" in lines and "GB RAM available" in lines
    assert "largest fit qwen2.5-coder-" in lines and "lsp-coder model use qwen2.5-coder-" in lines
    if not gpu_build:
        assert "this llama.cpp is CPU-only" in lines
        for flag in ("-DGGML_CUDA=on", "-DGGML_METAL=on", "-DGGML_VULKAN=on"):
            assert flag in lines
