"""What this process's llama.cpp build offers on this machine: the CPU features it was built
with and found, GPU offload, AMX kernels, and the devices it can run on with their memory."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import lru_cache

import llama_cpp

from .llama import init_backend


def system_info() -> str:
    """ggml's own description of the CPU features it was built with and found."""
    init_backend()
    return llama_cpp.llama_print_system_info().decode("utf-8", "replace")


def gpu_offload_supported() -> bool:
    """Whether this llama.cpp build can offload layers to a GPU."""
    return bool(llama_cpp.llama_supports_gpu_offload())


@dataclass(frozen=True, slots=True)
class Device:
    """A compute device of this llama.cpp build, as ggml's backend registry reports it."""

    name: str  # ggml's short name: "CPU", "CUDA0", "Metal", "Vulkan0"
    description: str  # the device's own name, e.g. the GPU model
    gpu: bool  # a discrete or integrated GPU (not the CPU, not an accelerator)
    free: int  # bytes free now (for the CPU: the system's available memory)
    total: int  # bytes in all


_GPU_TYPES = (1, 2)  # GGML_BACKEND_DEVICE_TYPE_GPU, GGML_BACKEND_DEVICE_TYPE_IGPU


def devices() -> list[Device]:
    """The devices llama.cpp can run on, with their memory (ggml_backend_dev_*)."""
    from llama_cpp._ggml import libggml as lib

    init_backend()
    lib.ggml_backend_dev_count.restype = ctypes.c_size_t
    lib.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
    lib.ggml_backend_dev_get.restype = ctypes.c_void_p
    for fn in (lib.ggml_backend_dev_name, lib.ggml_backend_dev_description):
        fn.argtypes, fn.restype = [ctypes.c_void_p], ctypes.c_char_p
    lib.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_dev_type.restype = ctypes.c_int
    lib.ggml_backend_dev_memory.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                            ctypes.POINTER(ctypes.c_size_t)]
    lib.ggml_backend_dev_memory.restype = None
    found = []
    for i in range(lib.ggml_backend_dev_count()):
        dev = lib.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        found.append(Device((lib.ggml_backend_dev_name(dev) or b"").decode("utf-8", "replace"),
                            (lib.ggml_backend_dev_description(dev) or b"").decode(
                                "utf-8", "replace"),
                            lib.ggml_backend_dev_type(dev) in _GPU_TYPES,
                            free.value, total.value))
    return found


@lru_cache(maxsize=1)
def build_has_amx() -> bool:
    """Whether this llama.cpp build carries ggml's AMX kernels."""
    return "AMX_INT8 = 1" in system_info()


@lru_cache(maxsize=1)
def build_has_tiled_kernels() -> bool:
    """Whether this llama.cpp build reads prompts on plain K-quant weights with ggml's tiled
    matrix kernels (x86 with AVX or better), which repacked weights cannot use."""
    return "AVX = 1" in system_info()
