"""CI checks of the VS Code extension in editors/vscode without VS Code: it type-checks, every
setting is used, and `npm run package` builds a VSIX holding the compiled extension."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.clients.conftest import GET_NODE, REPO_ROOT, npm_ci, run_client
from tests.conftest import require_program

pytestmark = pytest.mark.clients

EXTENSION_DIR = REPO_ROOT / "editors" / "vscode"
VSIX = EXTENSION_DIR / "lsp-coder.vsix"


def test_vscode_extension_type_checks(npx: str) -> None:
    """`tsc --noEmit` passes on the extension against its locked dependencies."""
    npm_ci(EXTENSION_DIR)
    # NOTE: --no keeps npx from downloading the unrelated "tsc" package if typescript is
    # missing, and "--" keeps npx from reading tsc's -p (--project) as its own --package.
    done = run_client([npx, "--no", "--", "tsc", "--noEmit", "-p", "."],
                      cwd=EXTENSION_DIR, timeout=180, env=None)
    assert not done.timed_out and done.returncode == 0, done.describe()


def test_vscode_extension_settings_are_all_read() -> None:
    """Every contributed `lspCoder.*` setting is read by the extension's source."""
    manifest = json.loads((EXTENSION_DIR / "package.json").read_text(encoding="utf-8"))
    settings = set(manifest["contributes"]["configuration"]["properties"])
    source = "\n".join(path.read_text(encoding="utf-8")
                       for path in sorted((EXTENSION_DIR / "src").glob("*.ts")))
    for setting in settings:
        name = setting.removeprefix("lspCoder.")
        assert f"'{name}'" in source, f"{setting} is contributed but src/ never reads it"
    assert manifest["engines"]["vscode"] == "^1.90.0"
    assert manifest["main"] == "./out/extension.js"
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    for binding in manifest["contributes"]["keybindings"]:
        assert binding["command"] in commands, binding


def test_npm_run_package_builds_the_vsix() -> None:
    """The one command that builds the extension: a VSIX with the compiled code and the
    runtime dependency, and no TypeScript sources or development tools."""
    npm_ci(EXTENSION_DIR)
    VSIX.unlink(missing_ok=True)
    npm = require_program("npm", GET_NODE)
    done = run_client([npm, "run", "package"], cwd=EXTENSION_DIR, timeout=300, env=None)
    assert not done.timed_out and done.returncode == 0, done.describe()
    with zipfile.ZipFile(VSIX) as vsix:
        names = set(vsix.namelist())
        compiled = vsix.read("extension/out/extension.js").decode("utf-8")
        manifest = json.loads(vsix.read("extension/package.json"))
    assert "lspCoder.suggest" in compiled and "lspCoder/status" in compiled
    for module in ("status", "gate", "menu", "settings", "statsReport"):
        assert f"extension/out/{module}.js" in names, sorted(names)[:40]
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    assert not [n for n in names if n.startswith("extension/src/") or "/@vscode/vsce/" in n
                or "/typescript/" in n]
    assert manifest["contributes"]["keybindings"][0]["command"] == "lspCoder.suggest"
