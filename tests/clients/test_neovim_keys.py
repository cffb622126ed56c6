"""The Neovim plugin's keys never take the user's own: with no suggestion shown each key does
what it did before the plugin, however that mapping was made; `keymaps` turns a key off or
names another. Debian's Neovim 0.7 and the test extra's 0.12; no server runs (no suggestion
ever shows), so these need no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients.conftest import REPO_ROOT
from tests.clients.nvim_ui import NvimUI
from tests.conftest import server_env

pytestmark = [pytest.mark.clients]

PLUGIN_ROOT = REPO_ROOT / "editors" / "neovim"

USER_MAPPINGS = r"""
local params = ...
vim.opt.runtimepath:append(params.plugin_root)
vim.cmd('runtime! plugin/lsp-coder.lua')
-- A user's insert-mode mappings of each kind, made before setup() as in an init.lua.
vim.api.nvim_set_keymap('i', '<Tab>', '[plain]', { noremap = true })
vim.api.nvim_set_keymap('i', '<Plug>(user-thing)', '[plug]', { noremap = true })
vim.api.nvim_set_keymap('i', '<M-Right>', '<Plug>(user-thing)', {})
vim.keymap.set('i', '<M-C-Right>', function()
  vim.api.nvim_put({ '[lua]' }, 'c', false, true)
end)
vim.keymap.set('i', '<M-]>', function() return '[lua-expr]' end, { expr = true })
vim.cmd([[inoremap <expr> <M-[> "[vim" . "-expr]"]])
vim.api.nvim_set_keymap('i', '<M-\\>', '[mine]', { noremap = true })
require('lsp-coder').setup(params.setup)
"""

TYPE = r"""
local keys = ...
vim.api.nvim_buf_set_lines(0, 0, -1, false, { '' })
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('i' .. keys .. '<Esc>', true, true, true),
  'mx', false)
return vim.api.nvim_get_current_line()
"""
"""Types `keys` in insert mode (mappings applied) and returns the line they left."""

MAPPING = r"""
local lhs = ...
local map = vim.fn.maparg(lhs, 'i', false, true)
return { rhs = map.rhs or '', desc = map.desc or '' }
"""


@pytest.fixture(params=["nvim", "nvim_recent"])
def program(request: pytest.FixtureRequest) -> str:
    """Debian's Neovim 0.7, then the test extra's 0.12."""
    return request.getfixturevalue(request.param)


def start(program: str, tmp_path: Path, args: tuple[str, ...] = ()) -> NvimUI:
    return NvimUI(program, cwd=tmp_path, args=args, log=tmp_path / "nvim-stderr.log",
                  env=server_env(XDG_STATE_HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path),
                                 XDG_CONFIG_HOME=str(tmp_path)))


def test_keys_do_what_they_did_before_when_no_suggestion_shows(program: str,
                                                                tmp_path: Path) -> None:
    ui = start(program, tmp_path)
    try:
        ui.lua(USER_MAPPINGS, {"plugin_root": str(PLUGIN_ROOT), "setup": {}})
        typed = {key: ui.lua(TYPE, key) for key in
                 ["<Tab>", "<M-Right>", "<M-C-Right>", "<M-]>", "<M-[>", "<M-\\>"]}
        ours = {key: ui.lua(MAPPING, key)["desc"] for key in ["<Tab>", "<M-\\>", "<C-]>"]}
        dismiss_alone = ui.lua(TYPE, "x<C-]>y")
    finally:
        ui.close()
    assert typed == {"<Tab>": "[plain]", "<M-Right>": "[plug]", "<M-C-Right>": "[lua]",
                     "<M-]>": "[lua-expr]", "<M-[>": "[vim-expr]", "<M-\\>": "[mine]"}, typed
    # The plugin holds the keys (they act while a suggestion shows), but not <M-\>, which has
    # nothing to fall back to: the user's mapping stays.
    assert ours["<Tab>"].startswith("lsp-coder: ") and ours["<C-]>"].startswith("lsp-coder: ")
    assert ours["<M-\\>"] == "", ours
    assert dismiss_alone == "xy"  # <C-]> with no mapping before: the key itself


def test_keymaps_turn_tab_off_and_name_other_keys(program: str, tmp_path: Path) -> None:
    ui = start(program, tmp_path)
    try:
        ui.lua(USER_MAPPINGS, {"plugin_root": str(PLUGIN_ROOT),
                               "setup": {"keymaps": {"accept": False, "accept_word": "<C-l>"}}})
        tab = ui.lua(MAPPING, "<Tab>")
        other = ui.lua(MAPPING, "<C-l>")
        word = ui.lua(MAPPING, "<M-Right>")
        typed = ui.lua(TYPE, "<Tab><C-l>")
    finally:
        ui.close()
    assert tab == {"rhs": "[plain]", "desc": ""}, tab  # the user's mapping, untouched
    assert other["desc"].startswith("lsp-coder: "), other
    assert word == {"rhs": "<Plug>(user-thing)", "desc": ""}, word
    # <C-l> had no mapping: with no suggestion it is the key itself, which inserts a ^L
    assert typed == "[plain]\x0c", typed


def test_a_mapping_made_later_in_the_config_is_kept(program: str, tmp_path: Path) -> None:
    """setup() early in the startup, the user's <Tab> mapping after it: the plugin maps at
    VimEnter, so <Tab> without a suggestion is the user's later mapping."""
    ui = start(program, tmp_path, args=(
        "--cmd", f"set runtimepath+={PLUGIN_ROOT}",
        "-c", "lua require('lsp-coder').setup({})",
        "-c", "inoremap <Tab> [later]"))
    try:
        tab = ui.lua(MAPPING, "<Tab>")
        typed = ui.lua(TYPE, "<Tab>")
    finally:
        ui.close()
    assert tab["desc"].startswith("lsp-coder: "), tab
    assert typed == "[later]", typed
