-- The options of require('lsp-coder').setup{} and their defaults.
local M = {}

M.defaults = {
  -- The server program and its arguments.
  cmd = { 'lsp-coder' },
  -- Buffers of these filetypes get the server.
  filetypes = {
    'python', 'rust', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact',
    'go', 'c', 'cpp', 'java', 'lua', 'sh',
  },
  -- A buffer's project root is the nearest folder holding one of these.
  root_markers = { '.git' },
  -- The server's config tree (snake_case keys, as in its config.toml), sent as
  -- initializationOptions. The plugin waits `debounce_ms` after a key before it asks, so the
  -- server's own debounce is off.
  init_options = { completion = { debounce_ms = 0 } },
  -- Suggestions as ghost text while typing (every Neovim from 0.7). false: the completion
  -- menu instead (0.11+, which opens it as you type) or the omnifunc (<C-x><C-o>, before);
  -- the server then lists its suggestion among the menu's items.
  ghost_text = true,
  -- Milliseconds after the last key before the plugin asks for a suggestion.
  debounce_ms = 75,
  -- Ask the server for the highlights where the cursor rests (the answer is not shown), so
  -- its idle time prepares the prompt of the next completion there (0.11+).
  cursor_hint = true,
  -- Insert-mode keys for the ghost text; false leaves a key unmapped. Each one, when no
  -- suggestion shows, does what it did before the plugin (your mapping, or the key itself).
  keymaps = {
    accept = '<Tab>',             -- the whole suggestion
    accept_word = '<M-Right>',    -- its next word
    accept_line = '<M-C-Right>',  -- the rest of its current line
    next = '<M-]>',               -- the next suggestion (asks for others when there is one)
    prev = '<M-[>',               -- the previous one
    dismiss = '<C-]>',            -- hide it until the next key
    suggest = '<M-\\>',           -- ask now, even with nothing typed (mapped only if free)
  },
}

local LISTS = { cmd = true, filetypes = true, root_markers = true }

--- The defaults with `opts` on top: lists are replaced whole, tables merged key by key.
function M.merge(opts)
  local merged = vim.deepcopy(M.defaults)
  for key, value in pairs(opts or {}) do
    if LISTS[key] or type(value) ~= 'table' or type(merged[key]) ~= 'table' then
      merged[key] = value
    else
      merged[key] = vim.tbl_deep_extend('force', merged[key], value)
    end
  end
  return merged
end

return M
