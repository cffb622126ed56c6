"""A real VS Code (code-server, in headless Chromium) shows lsp-coder's ghost text, and not the
same suggestion again in the IntelliSense list; Tab accepts.

The extension is packaged from editors/vscode with vsce and installed with
`code-server --install-extension`, as a user installs it. Its settings start this checkout's
server (`python -m lsp_coder`) on the embedded 0.5B model. The test types into a Python file,
waits for the inline suggestion VS Code draws, saves a screenshot of it to
$LSP_CODER_ARTIFACTS, opens the IntelliSense list there (Ctrl+Space) and reads its rows, presses
Tab, and checks the document and the server's statistics.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.clients.conftest import REPO_ROOT
from tests.clients.vscode_browser import (
    CHROMIUM_ARGS,
    Workbench,
    code_server,
    install_extension,
    output_log,
)
from tests.clients.vscode_toolchain import HOW_TO_GET, Toolchain, ToolchainMissing, find
from tests.conftest import require_or_skip, server_env

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

EXTENSION_DIR = REPO_ROOT / "editors" / "vscode"
FILE_TEXT = '"""Small numeric helpers."""\n\n\n'
TYPED = "def fibonacci(n):"
AUTO_INDENT = "    "
"""What VS Code puts on the line after `TYPED` and Enter, before the cursor."""
SERVER_CONFIG = """\
[completion]
inline_budget_ms = 20000
completion_budget_ms = 20000
max_tokens = 48
"""
"""Generous budgets: a shared CI runner is slow, and the test checks what VS Code shows."""

MODEL_WAIT_S = 180
GHOST_WAIT_S = 90


def toolchain_or_skip() -> Toolchain:
    try:
        return find()
    except ToolchainMissing as exc:
        require_or_skip(f"{exc}; to run this test: {HOW_TO_GET}")
        raise


def chromium_or_skip() -> str:
    path = shutil.which("chromium")
    if path is None:
        require_or_skip(f"'chromium' is not on PATH; to run this test: {HOW_TO_GET}")
    return path


def playwright_or_skip() -> Callable[[], Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require_or_skip(f"playwright is not installed; to run this test: {HOW_TO_GET}")
        raise
    return sync_playwright


@pytest.fixture
def artifacts_dir() -> Path:
    """$LSP_CODER_ARTIFACTS, or a new temporary folder (kept, so a person can look)."""
    folder = os.environ.get("LSP_CODER_ARTIFACTS") or tempfile.mkdtemp(prefix="lsp-coder-")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


def package_extension(toolchain: Toolchain, out: Path) -> Path:
    """`npm run package` in editors/vscode (compiles, then vsce); returns a copy of the VSIX."""
    env = toolchain.env()
    npm = str(toolchain.bin_dir / "npm")
    if not (EXTENSION_DIR / "node_modules" / ".bin" / "vsce").exists():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=EXTENSION_DIR,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    built = EXTENSION_DIR / "lsp-coder.vsix"
    built.unlink(missing_ok=True)
    done = subprocess.run([npm, "run", "package"], cwd=EXTENSION_DIR, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and built.is_file(), done.stdout + done.stderr
    vsix = out / "lsp-coder.vsix"
    shutil.copyfile(built, vsix)
    return vsix


def user_settings(model: Path, server_config: Path) -> dict[str, Any]:
    """The extension's settings that start this checkout's server, and a quiet workbench."""
    return {
        "lspCoder.serverPath": sys.executable,
        # NOTE: no -P: the workspace holds numbers.py, which would shadow the standard module
        # if the extension started the server in the workspace folder (it must not).
        "lspCoder.serverArgs": ["-m", "lsp_coder", "--config", str(server_config)],
        "lspCoder.model.path": str(model),
        "lspCoder.model.draftPath": "none",
        "lspCoder.completion.debounceMs": 0,
        "lspCoder.completion.maxLines": 4,
        "workbench.startupEditor": "none",
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
    }


def wait_for(condition: Callable[[], Any], timeout_s: float, what: str,
             context: Callable[[], str]) -> Any:
    """Polls `condition` until it returns something truthy.

    Fails after `timeout_s` with `context()` (e.g. the server's log) in the message.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}\n"
                        f"{context()[-4000:]}")
        time.sleep(0.2)


def last_stats_report(text: str) -> str:
    """The last statistics report (lsp-coder: Show Statistics) in the output channel's text."""
    start = text.rfind("lsp-coder statistics at ")
    assert start >= 0, text[-2000:]
    return text[start:]


def stats_figure(report: str, name: str) -> int:
    """The number after ``name:`` in a statistics report."""
    match = re.search(rf"^  {re.escape(name)}:\s+(\d+)", report, re.MULTILINE)
    assert match, (name, report)
    return int(match.group(1))


@dataclass(frozen=True)
class VsCodeSetup:
    """The folders one VS Code run uses."""

    user_data: Path
    extensions: Path
    source: Path
    """The Python file the test types into; its folder is the workspace."""

    @property
    def settings_file(self) -> Path:
        """The user's settings.json (VS Code picks up a change to it while running)."""
        return self.user_data / "User" / "settings.json"

    def env(self, toolchain: Toolchain, tmp_path: Path) -> dict[str, str]:
        """code-server's environment; the server it starts imports this checkout."""
        pythonpath = os.pathsep.join(filter(None, [str(REPO_ROOT),
                                                   os.environ.get("PYTHONPATH")]))
        return toolchain.env(server_env(PYTHONPATH=pythonpath,
                                        XDG_DATA_HOME=str(tmp_path / "data")))


def prepare(tmp_path: Path, toolchain: Toolchain, model: Path,
            extra_settings: dict[str, Any] | None = None,
            server_config: str = SERVER_CONFIG) -> VsCodeSetup:
    """Packages and installs the extension, writes its settings (``user_settings`` and
    ``extra_settings``), the server's config file and the workspace."""
    vsix = package_extension(toolchain, tmp_path)
    # NOTE: named like a standard module on purpose: the server runs in the workspace folder.
    setup = VsCodeSetup(user_data=tmp_path / "user-data", extensions=tmp_path / "extensions",
                        source=tmp_path / "workspace" / "numbers.py")
    setup.source.parent.mkdir()
    setup.source.write_text(FILE_TEXT, encoding="utf-8")
    config_file = tmp_path / "lsp-coder.toml"
    config_file.write_text(server_config, encoding="utf-8")
    (setup.user_data / "User").mkdir(parents=True)
    setup.settings_file.write_text(json.dumps(
        {**user_settings(model, config_file), **(extra_settings or {})}, indent=2),
        encoding="utf-8")
    installed = install_extension(toolchain, vsix, setup.user_data, setup.extensions,
                                  setup.env(toolchain, tmp_path))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert list(setup.extensions.glob("lsp-coder.lsp-coder-0.1.0*")), installed.stdout
    return setup


@dataclass(frozen=True)
class Tools:
    """The programs the test drives."""

    toolchain: Toolchain
    chromium: str
    sync_playwright: Callable[[], Any]


@pytest.fixture(scope="session")
def vscode_tools() -> Tools:
    """The installed programs, or a skip (a failure in CI) naming what is missing.

    Session-scoped and requested first, so it skips before the model fixture does any work.
    """
    return Tools(toolchain_or_skip(), chromium_or_skip(), playwright_or_skip())


def test_vscode_shows_and_accepts_lsp_coder_ghost_text(
        vscode_tools: Tools, tmp_path: Path, real_small_model: Path, artifacts_dir: Path) -> None:
    """Typing a def in VS Code shows lsp-coder's suggestion as ghost text; Tab inserts it."""
    toolchain, chromium = vscode_tools.toolchain, vscode_tools.chromium
    sync_playwright = vscode_tools.sync_playwright
    setup = prepare(tmp_path, toolchain, real_small_model)

    def server_log() -> str:
        return f"--- lsp-coder output channel ---\n{output_log(setup.user_data)}"

    with code_server(toolchain, user_data=setup.user_data, extensions=setup.extensions,
                     workspace=setup.source.parent, env=setup.env(toolchain, tmp_path)
                     ) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        workbench = Workbench(page)
        try:
            page.goto(server.url)
            workbench.wait_until_ready()
            wait_for(lambda: "lsp-coder: loaded" in output_log(setup.user_data), MODEL_WAIT_S,
                     "the server's 'loaded' message", server_log)

            editor = workbench.open_file(setup.source.name)
            editor.click()
            page.keyboard.press("Control+End")
            page.keyboard.type(TYPED)
            page.keyboard.press("Enter")
            ghost = "".join(wait_for(workbench.ghost_text, GHOST_WAIT_S, "ghost text",
                                     server_log)).strip()
            page.screenshot(path=str(artifacts_dir / "vscode-ghost-text.png"))
            assert ghost
            assert not workbench.suggest_widget_visible()

            # The IntelliSense list opened where the ghost text shows (its suggestion is in
            # the server's cache) does not offer the same text a second time.
            shown_first = ghost
            page.keyboard.press("Control+Space")
            listed = wait_for(workbench.suggest_labels, 30, "the completion list", server_log)
            page.screenshot(path=str(artifacts_dir / "vscode-intellisense.png"))
            page.keyboard.press("Escape")
            wait_for(lambda: not workbench.suggest_widget_visible(), 10,
                     "the completion list to close", server_log)
            if not workbench.ghost_text():
                page.keyboard.press("Alt+Backslash")  # lsp-coder: Suggest Here
            ghost = "".join(wait_for(workbench.ghost_text, GHOST_WAIT_S, "ghost text again",
                                     server_log)).strip()

            page.keyboard.press("Tab")
            wait_for(lambda: not workbench.ghost_text()
                     and ghost in workbench.visible_text(editor),
                     30, "the ghost text to become document text", server_log)
            page.keyboard.press("Control+S")
            saved = wait_for(lambda: ghost in (text := setup.source.read_text(
                encoding="utf-8")) and text, 30, "the saved document", server_log)
            page.screenshot(path=str(artifacts_dir / "vscode-accepted.png"))

            workbench.run_command("lsp-coder: Show Statistics")
            report = wait_for(lambda: "Latest requests" in (log := output_log(setup.user_data))
                              and last_stats_report(log), 30, "the statistics", server_log)
        except BaseException:
            page.screenshot(path=str(artifacts_dir / "vscode-failure.png"))
            raise
        finally:
            browser.close()

    assert listed and not [label for label in listed if shown_first in label], (
        shown_first, listed)
    typed_prefix = FILE_TEXT + TYPED + "\n" + AUTO_INDENT
    assert saved.startswith(typed_prefix), saved
    suggestion = saved[len(typed_prefix):]
    assert suggestion.splitlines()[0].strip() == ghost, (ghost, saved)
    # The statistics are text a person reads, not JSON.
    assert "{" not in report, report
    assert stats_figure(report, "Suggestions shown") >= 1, report
    assert stats_figure(report, "Accepted") == 1, report
    assert re.search(rf"inline\s+ok\s+{len(suggestion)} chars", report), (report, suggestion)
    assert f"lsp-coder: loaded {real_small_model}" in output_log(setup.user_data)
