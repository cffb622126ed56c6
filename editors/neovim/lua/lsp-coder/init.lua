-- lsp-coder for Neovim: local AI code completion over LSP.
--
--   require('lsp-coder').setup({ cmd = { 'lsp-coder' }, init_options = { ... } })
--
-- Every Neovim from 0.7: ghost text drawn by the plugin (lsp-coder.ghost), its keys
-- (lsp-coder.keys). With ghost_text = false: the completion menu as you type on 0.11+
-- (vim.lsp.completion with autotrigger), the omnifunc (<C-x><C-o>) before.
-- The server starts through vim.lsp.config / vim.lsp.enable on 0.11+, on FileType before.
local M = {}

M.NAME = 'lsp_coder'

--- The options setup() was given, merged with the defaults; nil before setup().
M.options = nil

--- Whether suggestions are on (:LspCoder toggle).
M.enabled = true

--- Whether this Neovim has vim.lsp.config and vim.lsp.enable (0.11+).
local function modern()
  return vim.lsp.config ~= nil and vim.lsp.enable ~= nil
end

--- How suggestions reach the user: 'ghost' (ghost text), 'menu' (the completion menu, 0.11+)
--- or 'omnifunc'.
function M.mode()
  if M.options == nil or M.options.ghost_text then
    return 'ghost'
  end
  return modern() and 'menu' or 'omnifunc'
end

--- Starts lsp-coder for the configured filetypes; see lsp-coder.config for the options.
function M.setup(opts)
  M.options = require('lsp-coder.config').merge(opts)
  if modern() then
    require('lsp-coder.modern').start(M.options, M.mode())
  else
    require('lsp-coder.legacy').start(M.options, M.mode())
  end
  if M.mode() == 'ghost' then
    require('lsp-coder.ghost').start(M.options)
    require('lsp-coder.keys').map_keys(M.options.keymaps or {})
  end
  return M
end

--- The running lsp-coder clients (attached to `bufnr` when given).
function M.clients(bufnr)
  if vim.lsp.get_clients ~= nil then
    return vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr })
  end
  local found = {}
  local all = bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients()
  for _, client in pairs(all) do
    if client.name == M.NAME then
      table.insert(found, client)
    end
  end
  return found
end

--- Switches suggestions off or on in every buffer; returns the new state.
function M.toggle()
  M.enabled = not M.enabled
  local mode = M.mode()
  if mode == 'ghost' then
    require('lsp-coder.ghost').clear()
    return M.enabled
  end
  for _, client in ipairs(M.clients()) do
    if mode == 'omnifunc' then
      require('lsp-coder.legacy').apply(client, M.enabled)
    else
      require('lsp-coder.modern').apply(client, M.enabled)
    end
  end
  return M.enabled
end

--- For your own mappings (an nvim-cmp <Tab>, say): each returns false, doing nothing, when
--- no suggestion shows.
function M.accept() return require('lsp-coder.ghost').accept('all') end
function M.accept_word() return require('lsp-coder.ghost').accept('word') end
function M.accept_line() return require('lsp-coder.ghost').accept('line') end
function M.next() return require('lsp-coder.ghost').cycle(1) end
function M.prev() return require('lsp-coder.ghost').cycle(-1) end
function M.dismiss() return require('lsp-coder.ghost').dismiss() end
function M.suggest() return require('lsp-coder.ghost').suggest() end
function M.visible() return require('lsp-coder.ghost').visible() end

return M
