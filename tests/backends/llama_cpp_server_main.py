"""``python -m llama_cpp.server`` with ggml's extra buffer types off where the build has AMX.

llama-cpp-python's server has no setting for them, and its repacked weights crash at the first
decode on an Intel CPU with AMX (seen on a 2-core Xeon), as in-process; lsp-coder's own
engine turns them off there (``model.use_extra_bufts = "auto"``), and this does the same for
the server the tests start. Arguments are the server's.
"""

from __future__ import annotations

import runpy

import llama_cpp.llama_cpp as bindings

from lsp_coder.engine.llama_system import build_has_amx

if build_has_amx():
    default_params = bindings.llama_model_default_params

    def without_extra_bufts():
        params = default_params()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without_extra_bufts

runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
