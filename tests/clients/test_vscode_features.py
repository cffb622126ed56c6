"""The VS Code extension's status bar item and menu, trigger key, "next suggestion", accept
word, and serving-engine settings, in a real VS Code (code-server in headless Chromium).

Screenshots of the status bar, its menu and the other states go to $LSP_CODER_ARTIFACTS.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.clients.test_vscode_real import (
    GHOST_WAIT_S,
    MODEL_WAIT_S,
    Tools,
    artifacts_dir,  # noqa: F401 (a fixture)
    last_stats_report,
    prepare,
    stats_figure,
    vscode_tools,  # noqa: F401 (a fixture)
    wait_for,
)
from tests.clients.vscode_browser import (
    CHROMIUM_ARGS,
    STATUS_ITEM,
    Workbench,
    code_server,
    output_log,
)
from tests.robustness.rawclient import RawServer

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

SOURCE_NAME = "greetings.py"
SOURCE_TEXT = "import random\n\n\ndef pick_greeting(names):\n    "
"""A body with many plausible first lines, so sampled alternatives differ from the first."""

RECORD_STATUS = """
window.__lspCoderStatus = [];
new MutationObserver(() => {
  const item = document.querySelector("%s");
  const text = item ? item.innerText.trim() : "";
  const seen = window.__lspCoderStatus;
  if (text && seen[seen.length - 1] !== text) seen.push(text);
}).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
""" % STATUS_ITEM
"""Records every text the status bar item shows (a model load can be over in a second)."""

SERVER_CONFIG = """\
[completion]
inline_budget_ms = 120000
max_tokens = 24
"""
"""Alternatives are sampled while the request's budget lasts: on a loaded CPU the first
suggestion alone can take 20 s."""

MENU = ["Disable suggestions", "Disable for python", "Snooze for 5 minutes",
        "Snooze for 30 minutes", "Show statistics", "Open log"]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Session:
    """One code-server page: the workbench, the log, the statistics."""

    def __init__(self, page: Any, user_data: Path, artifacts: Path) -> None:
        self.page = page
        self.workbench = Workbench(page)
        self.user_data = user_data
        self.artifacts = artifacts

    def log(self) -> str:
        return f"--- lsp-coder output channel ---\n{output_log(self.user_data)}"

    def wait(self, condition, what: str, timeout_s: float = 30) -> Any:
        return wait_for(condition, timeout_s, what, self.log)

    def status_becomes(self, pattern: str) -> str:
        return self.wait(lambda: re.fullmatch(pattern, text := self.workbench.status_text())
                         and text, f"the status bar item to show {pattern!r}")

    def stats(self) -> str:
        """A fresh statistics report (lsp-coder: Show Statistics)."""
        before = output_log(self.user_data).count("lsp-coder statistics at ")
        self.workbench.run_command("lsp-coder: Show Statistics")
        return self.wait(lambda: (log := output_log(self.user_data)).count(
            "lsp-coder statistics at ") > before and "Engine time" in log.rsplit(
            "lsp-coder statistics at ", 1)[1] and last_stats_report(log), "the statistics")

    def ghost(self, other_than: str | None = None) -> str:
        """The ghost text on the cursor's line, once there is some (other than ``other_than``).

        An invoked request samples alternatives after its first suggestion: on a loaded CPU
        that takes a while."""
        return self.wait(lambda: (text := "".join(self.workbench.ghost_text()).strip())
                         and text != other_than and text, "ghost text", 3 * GHOST_WAIT_S)

    def shot(self, name: str, locator: Any = None) -> None:
        (locator or self.page).screenshot(path=str(self.artifacts / name))


def test_vscode_status_menu_trigger_and_engine_settings(
        vscode_tools: Tools, tmp_path: Path, real_small_model: Path,  # noqa: F811
        artifacts_dir: Path) -> None:  # noqa: F811
    toolchain = vscode_tools.toolchain
    setup = prepare(tmp_path, toolchain, real_small_model, {
        # One line each, so each alternative differs on the line the ghost text is read from.
        "lspCoder.completion.alternatives": 4, "lspCoder.completion.maxLines": 1},
        server_config=SERVER_CONFIG)
    source = setup.source.parent / SOURCE_NAME
    source.write_text(SOURCE_TEXT, encoding="utf-8")
    env = setup.env(toolchain, tmp_path)
    with code_server(toolchain, user_data=setup.user_data, extensions=setup.extensions,
                     workspace=setup.source.parent, env=env
                     ) as server, vscode_tools.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=vscode_tools.chromium,
                                             headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.add_init_script(RECORD_STATUS)
        s = Session(page, setup.user_data, artifacts_dir)
        try:
            page.goto(server.url)
            s.workbench.wait_until_ready()
            s.wait(lambda: "lsp-coder: loaded" in output_log(setup.user_data),
                   "the server's 'loaded' message", MODEL_WAIT_S)
            s.status_becomes("lsp-coder")
            seen = page.evaluate("window.__lspCoderStatus")
            s.shot("vscode-status-ready.png", page.locator(".part.statusbar"))

            # Another editor with the same model joins VS Code's shared server.
            other = RawServer(env)
            try:
                other.initialize({"model": {"path": str(real_small_model),
                                            "draft_path": "none"}})
                shared_tooltip = s.wait(lambda: "shared with 1 other editor" in (
                    label := s.workbench.status_item().get_attribute("aria-label") or "")
                    and label, "the tooltip to say the model is shared")
                other_status = other.call("workspace/executeCommand",
                                          {"command": "lspCoder.status"})["result"]
            finally:
                other.close()

            editor = s.workbench.open_file(SOURCE_NAME)
            editor.click()
            page.keyboard.press("Control+End")
            labels = s.workbench.open_status_menu()
            s.shot("vscode-status-menu.png")
            page.keyboard.press("Escape")

            # Snoozed: typing sends nothing; the trigger key still asks.
            s.workbench.pick_from_status_menu("Snooze for 5 minutes")
            s.status_becomes("lsp-coder snoozed")
            s.shot("vscode-status-snoozed.png", page.locator(".part.statusbar"))
            requests_before = stats_figure(s.stats(), "Requests")
            editor.click()
            page.keyboard.press("Control+End")
            page.keyboard.type("# greet\n")
            typed_report = s.stats()
            editor.click()
            page.keyboard.press("Control+End")
            page.keyboard.press("Alt+Backslash")
            first = s.ghost()
            page.keyboard.press("Alt+BracketRight")
            second = s.ghost(other_than=first)
            s.shot("vscode-next-suggestion.png")
            page.keyboard.press("Control+ArrowRight")  # accept the next word
            rest = s.wait(lambda: (text := "".join(s.workbench.ghost_text()).strip())
                          != second and second.endswith(text) and text,
                          "the ghost text to lose the accepted word")
            page.keyboard.press("Escape")
            page.keyboard.press("Control+S")
            saved = s.wait(lambda: (text := source.read_text(encoding="utf-8")).endswith(
                second[: len(second) - len(rest)].rstrip()) and text, "the saved document")
            asked_report = s.stats()

            s.workbench.pick_from_status_menu("Resume now")
            s.status_becomes("lsp-coder")
            s.workbench.pick_from_status_menu("Disable for python")
            s.status_becomes(r"lsp-coder off \(python\)")
            s.shot("vscode-status-off-python.png", page.locator(".part.statusbar"))
            settings_after_language = json.loads(setup.settings_file.read_text("utf-8"))
            s.workbench.pick_from_status_menu("Enable for python")
            s.status_becomes("lsp-coder")
            s.workbench.pick_from_status_menu("Disable suggestions")
            s.status_becomes("lsp-coder off")
            s.workbench.pick_from_status_menu("Enable suggestions")
            s.status_becomes("lsp-coder")

            # A serving engine from the settings alone (no TOML): one that does not answer.
            url = f"http://127.0.0.1:{closed_port()}"
            settings = json.loads(setup.settings_file.read_text("utf-8"))
            settings.update({"lspCoder.backend.kind": "llama-server", "lspCoder.backend.url": url,
                             "lspCoder.backend.fimTemplate": "qwen",
                             "lspCoder.backend.apiKeyEnv": "LSP_CODER_TEST_TOKEN"})
            setup.settings_file.write_text(json.dumps(settings, indent=2), "utf-8")
            # NOTE: code-server did not pass this file's change on to the extension within a
            # minute; a reload reads it, and the server gets it in initializationOptions.
            s.workbench.run_command("Developer: Reload Window")
            s.workbench.wait_until_ready()
            s.wait(lambda: f"completing on llama-server at {url}" in output_log(setup.user_data),
                   "the server to start on the serving engine", MODEL_WAIT_S)
            s.status_becomes("lsp-coder")
            ready_tooltip = s.workbench.status_item().get_attribute("aria-label") or ""
            editor = page.locator(f".monaco-editor[data-uri$='/{SOURCE_NAME}']")
            editor.click()
            page.keyboard.press("Alt+Backslash")
            s.status_becomes("lsp-coder unreachable")
            tooltip = s.workbench.status_item().get_attribute("aria-label") or ""
            s.shot("vscode-status-unreachable.png", page.locator(".part.statusbar"))
        except BaseException:
            page.screenshot(path=str(artifacts_dir / "vscode-features-failure.png"))
            raise
        finally:
            browser.close()

    assert any(re.fullmatch(r"lsp-coder \d+%", text) for text in seen), seen
    assert "ready (the local model, shared with 1 other editor)" in shared_tooltip
    assert other_status["editors"] == 2 and other_status["shared"] is True, other_status
    assert [label for label in MENU if not any(label in row for row in labels)] == [], labels
    # Nothing was asked while snoozed until the key; what was asked then skipped the debounce
    # and came with alternatives.
    assert stats_figure(typed_report, "Requests") == requests_before, typed_report
    asked = asked_report.split("Latest requests (newest last):\n", 1)[1].splitlines()
    assert stats_figure(asked_report, "Requests") == requests_before + len(asked), asked_report
    assert all("asked for" in line for line in asked), asked_report
    assert re.search(r"asked for, \+\d alternatives$", asked[0]), asked_report
    assert second != first
    last_line = saved.rstrip("\n").rsplit("\n", 1)[-1].strip()
    assert last_line and second.startswith(last_line) and second != last_line, (saved, second)
    assert settings_after_language.get("lspCoder.disabledLanguages") == ["python"]
    assert f"ready (llama-server at {url})" in ready_tooltip, ready_tooltip
    assert url in tooltip and "not reachable" in tooltip, tooltip
