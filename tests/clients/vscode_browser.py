"""Run code-server on loopback and drive its workbench in headless Chromium with Playwright."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.clients.vscode_toolchain import Toolchain

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
"""Flags that let Debian's Chromium run headless in a container without internet."""

LISTENING = re.compile(r"HTTP server listening on (http://127\.0\.0\.1:\d+/)")
GHOST_TEXT = ".ghost-text-decoration, .ghost-text-decoration-preview"
"""The inline suggestion's part on the cursor's line, as VS Code draws it."""
STATUS_ITEM = ".statusbar-item[id$='lspCoder.status']"
"""lsp-coder's status bar item (its id ends with the one the extension gives it)."""
QUICK_PICK_ROWS = ".quick-input-widget .quick-input-list .monaco-list-row"


@dataclass
class CodeServer:
    """A running code-server: its URL and everything it printed so far."""

    url: str = ""
    output: list[str] = field(default_factory=list)

    def log(self) -> str:
        """The last lines code-server printed, for a failure message."""
        return "".join(self.output[-60:])


def output_log(user_data: Path) -> str:
    """What the *lsp-coder* output channel holds: the server's stderr, its log messages, the
    client's errors; VS Code writes it under the user data folder ('' before it has)."""
    found = sorted(user_data.glob("logs/*/exthost*/output_logging_*/*lsp-coder.log"))
    return found[-1].read_text(encoding="utf-8") if found else ""


def _config_file(user_data: Path) -> Path:
    """code-server's own config (else it writes one, with a password, under ~/.config)."""
    user_data.mkdir(parents=True, exist_ok=True)
    config = user_data / "code-server.yaml"
    config.write_text("auth: none\n", encoding="utf-8")
    return config


def install_extension(toolchain: Toolchain, vsix: Path, user_data: Path, extensions: Path,
                      env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`code-server --install-extension`, as a user installs a VSIX."""
    return subprocess.run(
        [*toolchain.code_server, "--config", str(_config_file(user_data)), "--user-data-dir",
         str(user_data), "--extensions-dir", str(extensions), "--install-extension", str(vsix)],
        env=env, capture_output=True, text=True, timeout=120)


@contextmanager
def code_server(toolchain: Toolchain, *, user_data: Path, extensions: Path, workspace: Path,
                env: dict[str, str], start_timeout_s: float = 90) -> Iterator[CodeServer]:
    """Starts code-server (no auth, a free loopback port) and stops its process group after.

    Raises:
        RuntimeError: it exited or did not listen within `start_timeout_s`.
    """
    cmd = [*toolchain.code_server, "--config", str(_config_file(user_data)), "--auth", "none",
           "--bind-addr", "127.0.0.1:0", "--disable-telemetry", "--disable-update-check",
           "--disable-workspace-trust", "--disable-getting-started-override",
           "--user-data-dir", str(user_data), "--extensions-dir", str(extensions),
           str(workspace)]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    server = CodeServer()
    listening = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            server.output.append(line)
            match = LISTENING.search(line)
            if match and not listening.is_set():
                server.url = match.group(1)
                listening.set()
        listening.set()  # exited: wake the waiter, which sees no URL

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        listening.wait(start_timeout_s)
        if not server.url:
            raise RuntimeError(f"code-server did not start: {server.log()}")
        yield server
    finally:
        # The group holds code-server, its extension host and the lsp-coder it started.
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join(timeout=5)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Workbench:
    """The VS Code workbench in a Playwright page: open files, run commands, read ghost text.

    Args:
        page: a `playwright.sync_api.Page` showing code-server.
    """

    def __init__(self, page: Any) -> None:
        self.page = page

    def wait_until_ready(self, timeout_s: float = 90) -> None:
        self.page.wait_for_selector(".monaco-workbench", timeout=timeout_s * 1000)

    def open_file(self, name: str) -> Any:
        """Opens a workspace file with Quick Open (Ctrl+P) and returns its editor's locator."""
        self._pick("Control+P", name, name)
        editor = self.page.locator(f".monaco-editor[data-uri$='/{name}']")
        editor.wait_for()
        return editor

    def run_command(self, title: str) -> None:
        """Runs a command from the Command Palette (F1) by its title."""
        self._pick("F1", title, title.split(": ", 1)[-1])

    def _pick(self, key: str, query: str, row_label: str) -> None:
        self.page.keyboard.press(key)
        self.page.keyboard.type(query)
        # NOTE: Enter before the row is listed picks nothing; file search is asynchronous.
        self.page.wait_for_selector(
            f".quick-input-list .monaco-list-row[aria-label*='{row_label}']")
        self.page.keyboard.press("Enter")

    def status_item(self) -> Any:
        """lsp-coder's status bar item."""
        return self.page.locator(STATUS_ITEM)

    def status_text(self) -> str:
        """The status bar item's text ('' before it is drawn)."""
        item = self.status_item()
        return _plain(item.inner_text()).strip() if item.count() else ""

    def open_status_menu(self) -> list[str]:
        """Clicks the status bar item; returns the labels of the menu it opens."""
        self.status_item().click()
        rows = self.page.locator(QUICK_PICK_ROWS)
        rows.first.wait_for()
        return [row.get_attribute("aria-label") or "" for row in rows.all()]

    def pick_from_status_menu(self, label: str) -> None:
        """Opens the status bar menu and runs the entry whose label contains ``label``."""
        self.open_status_menu()
        self.page.locator(f"{QUICK_PICK_ROWS}[aria-label*='{label}']").click()
        self.page.locator(QUICK_PICK_ROWS).first.wait_for(state="hidden")

    def ghost_text(self) -> list[str]:
        """The pieces of the inline suggestion drawn on the cursor's line ([] when none)."""
        return [_plain(text) for text in self.page.locator(GHOST_TEXT).all_inner_texts()]

    def suggest_widget_visible(self) -> bool:
        """Whether the completion list is open (Tab would accept from it instead)."""
        return bool(self.page.locator(".suggest-widget.visible").count())

    def suggest_labels(self) -> list[str]:
        """The labels (accessible names) of the open completion list's rows ([] when none)."""
        rows = self.page.locator(".suggest-widget.visible .monaco-list-row")
        return [_plain(row.get_attribute("aria-label") or "") for row in rows.all()]

    @staticmethod
    def visible_text(editor: Any) -> str:
        """The text of the editor's rendered lines."""
        return _plain(editor.locator(".view-lines").inner_text())


def _plain(text: str) -> str:
    """Rendered editor text with the no-break spaces VS Code draws for spaces made plain."""
    return text.replace("\u00a0", " ")
