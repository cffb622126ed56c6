"""CI type-check of the VS Code extension in editors/vscode (VS Code itself can't run here)."""

from __future__ import annotations

import json

import pytest

from tests.clients.conftest import REPO_ROOT, npm_ci, run_client

pytestmark = pytest.mark.clients

EXTENSION_DIR = REPO_ROOT / "editors" / "vscode"


def test_vscode_extension_type_checks(npx: str) -> None:
    """`tsc --noEmit` passes on the extension against its locked dependencies."""
    npm_ci(EXTENSION_DIR)
    # NOTE: --no keeps npx from downloading the unrelated "tsc" package if typescript is
    # missing, and "--" keeps npx from reading tsc's -p (--project) as its own --package.
    done = run_client([npx, "--no", "--", "tsc", "--noEmit", "-p", "."],
                      cwd=EXTENSION_DIR, timeout=180, env=None)
    assert not done.timed_out and done.returncode == 0, done.describe()


def test_vscode_extension_settings_match_the_server() -> None:
    """Every contributed `lspCoder.*` setting is either mapped to a server key or client-only."""
    manifest = json.loads((EXTENSION_DIR / "package.json").read_text(encoding="utf-8"))
    settings = set(manifest["contributes"]["configuration"]["properties"])
    source = (EXTENSION_DIR / "src" / "extension.ts").read_text(encoding="utf-8")
    for setting in settings:
        name = setting.removeprefix("lspCoder.")
        assert f"'{name}'" in source, f"{setting} is contributed but extension.ts never reads it"
    assert manifest["engines"]["vscode"] == "^1.90.0"
    assert manifest["main"] == "./out/extension.js"
