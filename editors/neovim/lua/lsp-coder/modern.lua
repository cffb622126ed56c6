-- Neovim 0.11+: vim.lsp.config / vim.lsp.enable; inline suggestions on 0.12, the completion
-- menu on 0.11.
local M = {}

local function state()
  return require('lsp-coder')
end

--- Applies the on/off state to one client: its inline suggestions (0.12) or its completion
--- menu autotrigger in each buffer it is attached to (0.11).
function M.apply(client, mode, enabled)
  if mode == 'inline' then
    vim.lsp.inline_completion.enable(enabled, { client_id = client.id })
    return
  end
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
  })
  vim.lsp.enable(name)
  local group = vim.api.nvim_create_augroup('lsp_coder', { clear = true })
  if opts.cursor_hint then
    vim.api.nvim_create_autocmd({ 'LspAttach', 'BufEnter', 'CursorHold' }, {
      group = group,
      callback = send_cursor_hint,
    })
  end
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client == nil or client.name ~= name then
        return
      end
      if mode == 'menu' then
        vim.lsp.completion.enable(state().enabled, client.id, args.buf, { autotrigger = true })
      elseif not state().enabled then
        vim.lsp.inline_completion.enable(false, { client_id = client.id })
      end
    end,
  })
  if mode == 'inline' then
    vim.lsp.inline_completion.enable()
    require('lsp-coder.inline').map_keys(opts.keymaps)
  end
end

return M
