"""Where the user's shared servers listen, and who may reach them.

One shared server runs per code build: every editor of the user running the same lsp-coder
shares it (editors whose settings choose the same model share that model in it), and another
version of lsp-coder after an upgrade gets a server of its own beside the old one. Each
listens on a Unix domain socket in a folder only the user can enter:
``$LSP_CODER_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/lsp-coder``, else ``run/`` in lsp-coder's
cache folder, each made (or fixed to) mode 0700 and checked to be the user's own. Where there
are no Unix sockets it listens on loopback TCP and writes its port and a random token to a 0600
file there; a client must send the token.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import stat
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..model_files import cache_dir

RUNTIME_ENV = "LSP_CODER_RUNTIME_DIR"
"""Overrides where shared servers listen (tests give each server a folder of its own)."""
TCP_ENV = "LSP_CODER_SHARED_TCP"
"""``1``: listen on loopback TCP with a token even where Unix sockets exist (for tests)."""
IDLE_EXIT_ENV = "LSP_CODER_IDLE_EXIT_S"
"""Overrides ``[server] idle_exit_s`` (tests and scripts: ``0`` exits with the last editor)."""
MAX_SOCKET_PATH = 100
"""Unix socket paths longer than this do not fit ``sockaddr_un`` on every system."""


class RuntimeDirError(OSError):
    """The runtime folder cannot be used safely; the message says why and what to do."""


def use_tcp() -> bool:
    """Whether shared servers listen on loopback TCP instead of a Unix socket."""
    return not hasattr(socket, "AF_UNIX") or os.environ.get(TCP_ENV) == "1"


def idle_exit_s(configured: float) -> float:
    """How long a shared server stays after its last editor: ``$LSP_CODER_IDLE_EXIT_S`` when
    set to a number, else ``configured``."""
    try:
        return max(0.0, float(os.environ[IDLE_EXIT_ENV]))
    except (KeyError, ValueError):
        return configured


def runtime_dir() -> Path:
    """The folder, made private to the user if needed (raises RuntimeDirError)."""
    explicit = os.environ.get(RUNTIME_ENV)
    if explicit:
        folder = Path(explicit)
    elif os.environ.get("XDG_RUNTIME_DIR"):
        folder = Path(os.environ["XDG_RUNTIME_DIR"]) / "lsp-coder"
    else:
        folder = cache_dir() / "run"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise RuntimeDirError(f"{folder} belongs to another user; set ${RUNTIME_ENV} to a folder"
                            " of your own")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    return folder


def build_id() -> str:
    """The version and a digest of this installation's code: a forwarder talks only to a
    server of the very same code (an upgrade, or an edit of an editable install, starts a new
    one beside the old)."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        digest.update(f"{path.relative_to(package)}:{info.st_size}:{info.st_mtime_ns}".encode())
    return f"{__version__}-{digest.hexdigest()[:10]}"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The files of one shared server (one build of lsp-coder) in the runtime folder."""

    folder: Path
    """The runtime folder."""
    name: str
    """``server-<build>``: what its files are called."""

    @classmethod
    def of(cls, build: str | None = None) -> Endpoint:
        return cls(runtime_dir(), f"server-{build or build_id()}")

    @property
    def socket(self) -> Path:
        """The Unix socket it listens on."""
        return self.folder / f"{self.name}.sock"

    @property
    def lock(self) -> Path:
        """Held by the forwarder that starts it, so two editors starting at once make one."""
        return self.folder / f"{self.name}.lock"

    @property
    def info(self) -> Path:
        """Its pid (and, over TCP, its port and token), mode 0600."""
        return self.folder / f"{self.name}.json"

    @property
    def log(self) -> Path:
        """Its log (warnings and errors; never document text)."""
        return self.folder / f"{self.name}.log"

    def check_socket_path(self) -> None:
        if len(str(self.socket)) > MAX_SOCKET_PATH:
            raise RuntimeDirError(f"{self.socket}: too long for a Unix socket; set"
                                f" ${RUNTIME_ENV} to a shorter folder")

    def write_info(self, pid: int, port: int | None = None) -> str | None:
        """Write the info file (0600); returns the token clients must send over TCP."""
        token = secrets.token_hex(16) if port is not None else None
        data = {"pid": pid, "port": port, "token": token}
        tmp = self.info.with_suffix(f".{pid}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, self.info)
        return token

    def read_info(self) -> dict:
        """The info file ({} when there is none or it cannot be read)."""
        try:
            return json.loads(self.info.read_text())
        except (OSError, ValueError):
            return {}

    def remove_files(self, pid: int) -> None:
        """Remove the socket and info file if they are still this server's (``pid``)."""
        if self.read_info().get("pid") != pid:
            return
        for path in (self.socket, self.info):
            try:
                path.unlink()
            except OSError:
                pass


def all_endpoints() -> list[Endpoint]:
    """Every shared server's files in the runtime folder (running or left behind)."""
    folder = runtime_dir()
    names = {p.name.rsplit(".", 1)[0] for p in folder.glob("server-*.json")}
    names |= {p.name.rsplit(".", 1)[0] for p in folder.glob("server-*.sock")}
    return [Endpoint(folder, name) for name in sorted(names)]


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket, where the OS tells it."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    if sys.platform == "darwin":  # LOCAL_PEERCRED at SOL_LOCAL: struct xucred {version, uid,...}
        creds = sock.getsockopt(0, 0x001, struct.calcsize("2I"))
        return struct.unpack_from("2I", creds)[1]
    return None
