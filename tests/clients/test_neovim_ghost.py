"""The Neovim plugin's ghost text, as a user sees it: Debian's Neovim 0.7 and the test extra's
0.12, each run as `nvim --embed` with a UI attached (tests/clients/nvim_ui.py), typing keys
into the real server on the embedded 0.5B model.

The suggestion is checked in the plugin's extmark and on the screen grid (drawn in the
`LspCoderSuggestion` highlight): shown while typing, kept while the typing matches it, gone
when it no longer does, on <Esc>, on <C-]> and on a buffer switch; accepted whole by <Tab> (the
server counts it), by word and by line; cycled with <M-]> and <M-[>. The user's own <Tab> and
<M-Right> mappings work when no suggestion shows, and completion lists leave the suggestion out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients.conftest import REPO_ROOT, SERVER_CMD, init_options
from tests.clients.nvim_ui import NvimUI, Screen
from tests.conftest import server_env

pytestmark = [pytest.mark.clients, pytest.mark.real_model]

PLUGIN_ROOT = REPO_ROOT / "editors" / "neovim"
GROUP = "LspCoderSuggestion"
LOAD_S = 120
GHOST_S = 60
"""How long a suggestion may take on a loaded 2-core machine (an invoked one samples others)."""

FILES = {
    "add.py": "def add(a, b):\n    ",
    "subtract.py": "def subtract(a, b):\n    ",
    "greet.py": "import random\n\n\ndef pick_greeting(names):\n    ",
}

SETUP = r"""
local params = ...
vim.cmd('filetype on')
vim.opt.runtimepath:append(params.plugin_root)
vim.cmd('runtime! plugin/lsp-coder.lua')
-- The user's own, from an init.lua: a colour for the suggestion, a plain <Tab> mapping and a
-- Lua expression mapping on <M-Right>, made before setup().
vim.cmd('highlight LspCoderSuggestion guifg=#8a2be2')
vim.api.nvim_set_keymap('i', '<Tab>', '[user-tab]', { noremap = true })
vim.keymap.set('i', '<M-Right>', function() return '[user-word]' end, { expr = true })
require('lsp-coder').setup({ cmd = params.cmd, init_options = params.init_options,
  filetypes = { 'python' } })
"""

MODEL_STATE = r"""
local client = require('lsp-coder').clients(0)[1]
if client == nil or not client.initialized then
  return false
end
local totals = require('lsp-coder.commands').totals(client)
if totals and totals.error ~= nil and totals.error ~= vim.NIL then
  return 'the model failed to load: ' .. tostring(totals.error)
end
return totals ~= nil and totals.model_loaded
"""

ACCEPTED = r"""
return require('lsp-coder.commands').totals(require('lsp-coder').clients(0)[1]).accepted
"""

GHOST = r"""
local bufnr = ... or 0
local ns = vim.api.nvim_get_namespaces()['lsp-coder.ghost']
local marks = vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })
local texts = {}
for _, mark in ipairs(marks) do
  local lines, first = {}, {}
  for _, chunk in ipairs(mark[4].virt_text or {}) do
    table.insert(first, chunk[1])
  end
  table.insert(lines, table.concat(first))
  for _, virt_line in ipairs(mark[4].virt_lines or {}) do
    local parts = {}
    for _, chunk in ipairs(virt_line) do
      table.insert(parts, chunk[1])
    end
    table.insert(lines, table.concat(parts))
  end
  table.insert(texts, table.concat(lines, '\n'))
end
return texts
"""
"""The text of each of the plugin's extmarks in a buffer (its virtual text, then lines)."""

LINES = "return vim.api.nvim_buf_get_lines(0, 0, -1, false)"

PROVIDERS = r"""
local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
local providers = {}
for _, client in ipairs(get_clients()) do
  local capabilities = client.server_capabilities or {}
  table.insert(providers, { completion = capabilities.completionProvider ~= nil,
                            inline = capabilities.inlineCompletionProvider ~= nil })
end
return providers
"""
"""What each running client's server offers: a completion and an inline completion provider."""

OUTPUT = r"""
local command = ...
if vim.api.nvim_exec2 then
  return vim.api.nvim_exec2(command, { output = true }).output
end
return vim.api.nvim_exec(command, true)
"""


@pytest.fixture(params=["nvim", "nvim_recent"])
def program(request: pytest.FixtureRequest) -> str:
    """Debian's Neovim 0.7, then the test extra's 0.12."""
    return request.getfixturevalue(request.param)


class Session:
    """One Neovim with the plugin set up, and what the test reads of it."""

    def __init__(self, ui: NvimUI) -> None:
        self.ui = ui

    def wait(self, what: str, probe: Callable[[], Any], timeout: float = 10) -> Any:
        """The first truthy value of `probe()`, polled; fails after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not (value := probe()):
            if time.monotonic() > deadline:
                screen = self.ui.screens[-1].text() if self.ui.screens else ""
                pytest.fail(f"timed out waiting for {what}; the screen:\n{screen}")
            time.sleep(0.05)
        return value

    def keys(self, keys: str) -> int:
        """Types `keys`; returns how many screens had been flushed before them."""
        before = len(self.ui.screens)
        self.ui.input(keys)
        return before

    def ghost(self, bufnr: int = 0) -> list[str]:
        return self.ui.lua(GHOST, bufnr)

    def lines(self) -> list[str]:
        return self.ui.lua(LINES)

    def screen_with_ghost(self, after: int, timeout: float = GHOST_S) -> Screen:
        return self.ui.wait_screen("ghost text", lambda s: s.cells_in_group(GROUP) != "",
                                   timeout, after=after)

    def screen_without_ghost(self, after: int) -> Screen:
        return self.ui.wait_screen("no ghost text", lambda s: s.cells_in_group(GROUP) == "",
                                   10, after=after)

    def shown(self, after: int) -> tuple[str, Screen]:
        """The suggestion once it shows (its extmark's text), and the screen showing it: the
        same text, line by line, in the suggestion's highlight."""
        self.screen_with_ghost(after)
        ghost = self.wait("the ghost text's extmark", lambda: self.ghost())
        assert len(ghost) == 1, ghost
        screen = self.ui.wait_screen(f"the screen to show {ghost[0]!r}", lambda x: (
            x.cells_in_group(GROUP) == on_screen(ghost[0])), 10, after=after)
        return ghost[0], screen

    def output(self, command: str) -> str:
        return self.ui.lua(OUTPUT, command)


def ghost_row(screen: Screen, row: int) -> str:
    """The cells of `row` drawn as the suggestion."""
    return "".join(ch for ch, groups in zip(screen.rows[row], screen.groups[row])
                   if GROUP in groups)


def text_row(screen: Screen, row: int) -> str:
    """The cells of `row` that are not the suggestion (the buffer's text), without the blanks
    after it."""
    return "".join(ch for ch, groups in zip(screen.rows[row], screen.groups[row])
                   if GROUP not in groups).rstrip()


def next_word(text: str) -> str:
    """What accept word takes (lsp-coder.ghost's next_word)."""
    found = re.match(r"\s*[A-Za-z0-9_]+", text) or re.match(r"\s*[^A-Za-z0-9_\s]+", text)
    return found.group(0) if found else text


def next_line(text: str) -> str:
    """What accept line takes (lsp-coder.ghost's next_line)."""
    found = re.match(r"\n[^\n]*", text) or re.match(r"[^\n]+", text)
    return found.group(0) if found else text


def on_screen(ghost: str) -> str:
    """`ghost` as the grid shows it: each line without its trailing blanks."""
    return "\n".join(line.rstrip() for line in ghost.split("\n"))


def test_neovim_ghost_text(program: str, tmp_path: Path, real_small_model: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    options = init_options(real_small_model)
    options["completion"].update(inline_budget_ms=30_000, alternatives=3)
    ui = NvimUI(program, cwd=tmp_path, log=tmp_path / "nvim-stderr.log", width=120,
                env=server_env(XDG_STATE_HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path),
                               XDG_CONFIG_HOME=str(tmp_path)))
    s = Session(ui)
    try:
        run(s, tmp_path, options)
    finally:
        ui.close()


def run(s: Session, tmp_path: Path, options: dict) -> None:
    s.ui.lua(SETUP, {"plugin_root": str(PLUGIN_ROOT), "cmd": SERVER_CMD,
                     "init_options": options})
    s.ui.request("nvim_command", "edit add.py")
    state = s.wait("the model", lambda: s.ui.lua(MODEL_STATE), LOAD_S)
    assert state is True, state
    assert "shown as ghost text" in s.output("LspCoder status")

    # No suggestion shows (suggestions off): the user's own mappings answer the keys.
    s.output("LspCoder toggle")
    s.keys("G$a<Tab><M-Right>")
    s.wait("the user's mappings", lambda: s.lines()[1] == "    [user-tab][user-word]")
    s.keys("<Esc>u")
    s.wait("the undo", lambda: s.lines() == ["def add(a, b):", "    "])
    assert "suggestions on" in s.output("LspCoder toggle")

    # Typing: the suggestion shows after the cursor, the same in the extmark and on screen.
    ghost, screen = s.shown(s.keys("A"))
    first = ghost.split("\n")[0]
    assert first.strip(), ghost
    assert screen.cursor == (1, 4), screen.cursor
    assert screen.rows[1].startswith("    " + first), screen.text()

    # Typing along it keeps what is left; a character it does not have takes it away at once.
    screen = s.ui.wait_screen("the typed character", lambda x: text_row(x, 1) == (
        "    " + first[0]), 10, after=s.keys(first[0]))
    assert ghost_row(screen, 1) == first[1:].rstrip(), screen.text()
    other = "Z" if first[1:2] != "Z" else "Q"
    screen = s.ui.wait_screen("the other character", lambda x: text_row(x, 1) == (
        "    " + first[0] + other), 10, after=s.keys(other))
    assert ghost_row(screen, 1) == "", screen.text()
    ghost, _ = s.shown(s.keys("<BS><BS>"))

    # <Esc> takes it away; back in insert mode it comes again.
    s.screen_without_ghost(s.keys("<Esc>"))
    assert s.ghost() == []
    s.shown(s.keys("A"))

    # <C-]> dismisses it, and <Tab> is then the user's mapping again.
    s.keys("<C-]><Tab>")
    s.wait("the user's <Tab>", lambda: s.lines()[1] == "    [user-tab]")
    s.keys("<Esc>u")
    s.wait("the undo", lambda: s.lines() == ["def add(a, b):", "    "])

    # <Tab> accepts the whole suggestion; the server counts the acceptance.
    accepted = s.ui.lua(ACCEPTED)
    ghost, _ = s.shown(s.keys("A"))
    s.keys("<Tab>")
    expected = ["def add(a, b):", *("    " + ghost).split("\n")]
    s.wait("the accepted suggestion", lambda: s.lines() == expected)
    s.wait("lspCoder.accepted", lambda: s.ui.lua(ACCEPTED) == accepted + 1)
    # No second copy in a menu: the server offers no completion to a ghost-text client.
    assert s.ui.lua(PROVIDERS) == [{"completion": False, "inline": True}]

    # A buffer switch takes it away.
    s.keys("<Esc>")
    s.ui.request("nvim_command", "edit subtract.py")
    subtract = s.ui.request("nvim_get_current_buf")
    ghost, _ = s.shown(s.keys("G$a"))
    s.screen_without_ghost(s.keys("<Cmd>buffer add.py<CR>"))
    assert s.ghost(subtract) == []
    s.keys("<Esc>")
    s.ui.request("nvim_command", "buffer subtract.py")
    ghost, _ = s.shown(s.keys("A"))

    # <M-Right> takes its next word (over the user's mapping), <M-C-Right> the rest of the line;
    # what is left stays shown.
    word = next_word(ghost)
    rest = ghost[len(word):]
    screen = s.ui.wait_screen("the accepted word", lambda x: text_row(x, 1) == (
        "    " + word).rstrip(), 10, after=s.keys("<M-Right>"))
    assert s.lines() == ["def subtract(a, b):", *("    " + word).split("\n")], (word, ghost)
    if "\n" not in word and rest:
        assert ghost_row(screen, 1) == rest.split("\n")[0].rstrip(), screen.text()
        line = next_line(rest)
        s.keys("<M-C-Right>")
        expected = ["def subtract(a, b):", *("    " + word + line).split("\n")]
        s.wait("the accepted line", lambda: s.lines() == expected)

    # <M-]> shows another suggestion (asked for now), <M-[> the first one again.
    s.keys("<Esc>")
    s.ui.request("nvim_command", "edit greet.py")
    ghost, screen = s.shown(s.keys("G$a"))
    assert screen.rows[4].startswith("    " + ghost.split("\n")[0]), screen.text()
    s.keys("<M-]>")
    second = s.wait("another suggestion", lambda: [g for g in s.ghost() if g != ghost], GHOST_S)
    s.keys("<M-[>")
    s.wait("the first suggestion again", lambda: s.ghost() == [ghost])
    assert second[0] != ghost

    stats = s.output("LspCoder stats")
    assert "suggestions accepted" in stats and "requests" in stats, stats
    assert "suggestions off" in s.output("LspCoder toggle")
    assert s.ghost() == []
