-- Neovim 0.11+: vim.lsp.config / vim.lsp.enable; without ghost text, the completion menu as
-- you type (vim.lsp.completion with autotrigger).
local M = {}

local function state()
  return require('lsp-coder')
end

--- Applies the on/off state to one client's completion menu autotrigger in each buffer it is
--- attached to.
function M.apply(client, enabled)
  for bufnr in pairs(client.attached_buffers) do
    vim.lsp.completion.enable(enabled, client.id, bufnr, { autotrigger = true })
  end
end

--- Tells the server where the cursor rests, as VS Code and Emacs eglot do by asking for the
--- highlights there: its idle time then prepares the prompt of the next completion at that
--- place. The answer is not shown.
local function send_cursor_hint(args)
  for _, client in ipairs(state().clients(args.buf)) do
    local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
    client:request('textDocument/documentHighlight', params, function() end, args.buf)
  end
end

function M.start(opts, mode)
  local name = state().NAME
  vim.lsp.config(name, {
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    init_options = opts.init_options,
    capabilities = require('lsp-coder.compat').capabilities(mode == 'ghost'),
  })
  vim.lsp.enable(name)
  local group = vim.api.nvim_create_augroup('lsp_coder', { clear = true })
  if opts.cursor_hint then
    vim.api.nvim_create_autocmd({ 'LspAttach', 'BufEnter', 'CursorHold' }, {
      group = group,
      callback = send_cursor_hint,
    })
  end
  if mode == 'menu' then
    vim.api.nvim_create_autocmd('LspAttach', {
      group = group,
      callback = function(args)
        local client = vim.lsp.get_client_by_id(args.data.client_id)
        if client ~= nil and client.name == name then
          vim.lsp.completion.enable(state().enabled, client.id, args.buf, { autotrigger = true })
        end
      end,
    })
  end
end

return M
