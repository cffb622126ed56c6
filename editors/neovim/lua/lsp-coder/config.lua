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
  -- initializationOptions. Neovim 0.12 waits 200 ms after a key before it asks for an
  -- inline completion, so the server's own debounce is off.
  init_options = { completion = { debounce_ms = 0 } },
  -- Ask the server for the highlights where the cursor rests (the answer is not shown), so
  -- its idle time prepares the prompt of the next completion there (0.11+).
  cursor_hint = true,
  -- Insert-mode keys for the inline suggestion (0.12+); false leaves a key unmapped.
  keymaps = {
    accept = '<Tab>',
    accept_word = '<M-Right>',
    accept_line = '<M-C-Right>',
    next = '<M-]>',
    prev = '<M-[>',
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
