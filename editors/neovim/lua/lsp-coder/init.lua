-- lsp-coder for Neovim: local AI code completion over LSP.
--
--   require('lsp-coder').setup({ cmd = { 'lsp-coder' }, init_options = { ... } })
--
-- Neovim 0.12+      inline (ghost text) suggestions: vim.lsp.inline_completion.
-- Neovim 0.11       suggestions in the completion menu: vim.lsp.completion with autotrigger.
-- Neovim 0.7-0.10   the server starts on FileType; complete with <C-x><C-o> (omnifunc).
local M = {}

M.NAME = 'lsp_coder'

--- The options setup() was given, merged with the defaults; nil before setup().
M.options = nil

--- Whether suggestions are on (:LspCoder toggle).
M.enabled = true

--- How suggestions reach the user on this Neovim: 'inline', 'menu' or 'omnifunc'.
function M.mode()
  if vim.lsp.config == nil or vim.lsp.enable == nil then
    return 'omnifunc'
  end
  return vim.lsp.inline_completion ~= nil and 'inline' or 'menu'
end

--- Starts lsp-coder for the configured filetypes; see lsp-coder.config for the options.
function M.setup(opts)
  M.options = require('lsp-coder.config').merge(opts)
  if M.mode() == 'omnifunc' then
    require('lsp-coder.legacy').start(M.options)
  else
    require('lsp-coder.modern').start(M.options, M.mode())
  end
  return M
end

--- The running lsp-coder clients (attached to `bufnr` when given, on 0.8+).
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
  for _, client in ipairs(M.clients()) do
    if mode == 'omnifunc' then
      require('lsp-coder.legacy').apply(client, M.enabled)
    else
      require('lsp-coder.modern').apply(client, mode, M.enabled)
    end
  end
  return M.enabled
end

return M
