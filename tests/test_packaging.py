"""The wheel people install (pipx, uv tool, pip): it holds the whole package and the command."""

from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_every_module_and_the_lsp_coder_command(tmp_path: Path) -> None:
    """`pip wheel .` (what pipx and `uv tool install .` build first): every module of the
    checkout is in it, no tests, and the `lsp-coder` console script points at the CLI."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path), str(REPO_ROOT)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = tmp_path.glob("lsp_coder-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = configparser.ConfigParser()
        scripts.read_string(archive.read(entry_points).decode("utf-8"))
    modules = {path.relative_to(REPO_ROOT).as_posix()
               for path in (REPO_ROOT / "lsp_coder").rglob("*.py")}
    assert "lsp_coder/server/app.py" in modules, modules
    assert sorted(modules - names) == []
    assert not [n for n in names if n.startswith("tests/")]
    assert scripts["console_scripts"]["lsp-coder"] == "lsp_coder.cli:main"
