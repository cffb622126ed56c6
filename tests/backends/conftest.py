"""Real serving engines on loopback, started by the tests: llama-server and llama_cpp.server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lsp_coder.engine.llama_system import build_has_amx
from lsp_coder.model_files import cache_dir
from tests.conftest import require_or_skip

LLAMA_SERVER_HOW = ("build it with  .ci/build-llama-server  (CPU, ~10 min on 2 cores) or set"
                    " LSP_CODER_LLAMA_SERVER to a llama-server binary")


def llama_server_path() -> Path | None:
    """``$LSP_CODER_LLAMA_SERVER``, else the build cache of ``.ci/build-llama-server``."""
    explicit = os.environ.get("LSP_CODER_LLAMA_SERVER")
    if explicit:
        return Path(explicit)
    import llama_cpp

    built = (cache_dir() / f"llama-server-{llama_cpp.__version__}" / "build" / "bin"
             / "llama-server")
    return built if built.is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Engine:
    """A serving engine subprocess on a loopback port; restartable on the same port."""

    def __init__(self, argv: list[str], port: int, ready_path: str, log: Path) -> None:
        self.argv = argv
        self.port = port
        self.ready_path = ready_path
        self.log = log
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 120.0) -> Engine:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.argv[0]} exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + self.ready_path, timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)  # polling a starting process: there is no event to wait on
        raise RuntimeError(f"{self.argv[0]} not ready in {timeout_s} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.proc = None


@pytest.fixture(scope="session")
def llama_server(real_small_model: Path, tmp_path_factory) -> Iterator[Engine]:
    """llama-server with the embedded 0.5B: 2 slots, prompt cache reuse, /slots on."""
    binary = llama_server_path()
    if binary is None or not binary.is_file():
        require_or_skip(f"no llama-server binary: {LLAMA_SERVER_HOW}")
    port = free_port()
    # Built here like llama-cpp-python (native), so it carries ggml's AMX kernels when that
    # does; repacked weights then crash at the first decode (seen on a 2-core Intel Xeon with
    # AMX: exit -11 after "threadpool init"), as in-process with model.use_extra_bufts.
    no_repack = ["--no-repack"] if build_has_amx() else []
    engine = Engine([str(binary), "-m", str(real_small_model), "--host", "127.0.0.1",
                     "--port", str(port), "-c", "4096", "-np", "2", "--slots",
                     "--cache-reuse", "64", "-t", "2", "--no-webui", *no_repack],
                    port, "/health", tmp_path_factory.mktemp("llama-server") / "log.txt")
    yield engine.start()
    engine.stop()


@pytest.fixture(scope="session")
def llama_cpp_server(real_small_model: Path, tmp_path_factory) -> Iterator[Engine]:
    """``python -m llama_cpp.server`` (OpenAI-compatible) with the embedded 0.5B."""
    engine = llama_cpp_server_engine(real_small_model,
                                     tmp_path_factory.mktemp("llama-cpp-server") / "log.txt",
                                     n_ctx=4096, alias="qwen-0.5b")
    yield engine.start()
    engine.stop()


def llama_cpp_server_engine(model: Path, log: Path, n_ctx: int,
                            alias: str | None = None) -> Engine:
    """An unstarted llama-cpp-python server (``llama_cpp_server_main.py``) on a free loopback
    port; skips (or fails in CI) when llama-cpp-python's server extra is not installed."""
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError:
        require_or_skip("llama_cpp.server is missing: pip install 'llama-cpp-python[server]'")
    port = free_port()
    argv = [sys.executable, str(Path(__file__).with_name("llama_cpp_server_main.py")),
            "--model", str(model),
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2"]
    if alias:
        argv += ["--model_alias", alias]
    return Engine(argv, port, "/v1/models", log)


@pytest.fixture
def httpserver(httpserver):
    """pytest-httpserver answering a route a test did not set up with 404, as an engine or
    a gateway without it does (a prompt then goes as text where ``/tokenize`` is missing)."""
    httpserver.no_handler_status_code = 404
    yield httpserver
