"""A client that stops reading the server's output: the event loop goes on, SIGTERM still ends
the process at once, and what it was not sent is bounded (in this process and through the
forwarder to a shared server)."""

from __future__ import annotations

import fcntl
import struct
import subprocess
import termios
import time

import pytest

from tests.conftest import server_env
from tests.robustness.conftest import tiny_options
from tests.robustness.rawclient import SERVER, frame
from tests.shared.helpers import wait_until


def unread(stream) -> int:
    """Bytes waiting in a pipe that nobody has read."""
    return struct.unpack("i", fcntl.ioctl(stream.fileno(), termios.FIONREAD, b"\0" * 4))[0]


@pytest.mark.parametrize("args", [("--no-shared",), ()], ids=["own-model", "forwarder"])
def test_a_client_that_stops_reading_cannot_block_sigterm(tiny_qwen, args):
    proc = subprocess.Popen([*SERVER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=server_env())
    try:
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "processId": None, "rootUri": None, "capabilities": {},
            "initializationOptions": tiny_options(tiny_qwen)}}))
        # Answers far beyond a pipe's buffer, none of them read.
        for n in range(1, 3001):
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": n,
                                    "method": "workspace/executeCommand",
                                    "params": {"command": "lspCoder.stats"}}))
        proc.stdin.flush()
        assert wait_until(lambda: unread(proc.stdout) >= 32_768, 60)  # its pipe fills
        assert proc.poll() is None
        sent = time.monotonic()
        proc.terminate()
        assert proc.wait(10) == 1  # SIGTERM without shutdown
        assert time.monotonic() - sent < 5
    finally:
        proc.kill()
        proc.wait()
