-- lsp-coder for Neovim: local AI code completion over LSP.
--
-- Copy this file to ~/.config/nvim/plugin/lsp-coder.lua (loaded at startup), or `dofile()` it
-- from your init.lua. Adjust `cmd`, `filetypes` and `init_options` below, or set
-- `vim.g.lsp_coder_cmd` / `vim.g.lsp_coder_init_options` before this file is loaded.
--
--   Neovim 0.12+   inline (ghost text) suggestions: vim.lsp.inline_completion, <Tab> accepts.
--   Neovim 0.11    suggestions in the completion menu: vim.lsp.completion with autotrigger.
--   Neovim 0.8-0.10  vim.lsp.start on FileType; complete with <C-x><C-o> (omnifunc).
--   (0.7 and older: vim.lsp.start_client, also with omnifunc.)

local cmd = vim.g.lsp_coder_cmd or { 'lsp-coder' }

local filetypes = {
  'python', 'rust', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact',
  'go', 'c', 'cpp', 'java', 'lua', 'sh',
}

-- The same tree as lsp-coder's config.toml (snake_case keys), sent as initializationOptions.
-- Empty: the server's config file, else its defaults (the embedded model).
local init_options = vim.g.lsp_coder_init_options or {
  -- model = { path = '/abs/path/model.gguf', draft_path = 'none' },
  -- Neovim already waits 200 ms after a keystroke before it asks for an inline completion.
  completion = { debounce_ms = 0 },
}

local root_markers = { '.git' }

---------------------------------------------------------------------------------------------
-- Neovim 0.11+: vim.lsp.config / vim.lsp.enable
---------------------------------------------------------------------------------------------
if vim.lsp.config ~= nil and vim.lsp.enable ~= nil then
  vim.lsp.config('lsp_coder', {
    cmd = cmd,
    filetypes = filetypes,
    root_markers = root_markers,
    init_options = init_options,
  })
  vim.lsp.enable('lsp_coder')

  -- Tell the server where the cursor rests, as VS Code and Emacs eglot do by asking for the
  -- highlights there: its idle time then prepares the prompt of the next completion at that
  -- place (a file just opened or switched to). The answer is not shown. CursorHold comes
  -- 'updatetime' ms after the cursor stops (4000 by default; 300 suits this better).
  vim.api.nvim_create_autocmd({ 'LspAttach', 'BufEnter', 'CursorHold' }, {
    group = vim.api.nvim_create_augroup('lsp_coder_cursor', { clear = true }),
    callback = function(args)
      for _, client in ipairs(vim.lsp.get_clients({ bufnr = args.buf, name = 'lsp_coder' })) do
        local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
        client:request('textDocument/documentHighlight', params, function() end, args.buf)
      end
    end,
  })

  if vim.lsp.inline_completion ~= nil then
    -- 0.12+: ghost text while typing in insert mode.
    vim.lsp.inline_completion.enable()
    vim.keymap.set('i', '<Tab>', function()
      if not vim.lsp.inline_completion.get() then
        return '<Tab>'
      end
    end, { expr = true, replace_keycodes = true, desc = 'Accept the inline completion' })
    vim.keymap.set('i', '<M-]>', function()
      vim.lsp.inline_completion.select({ count = 1 })
    end, { desc = 'Next inline completion' })
  else
    -- 0.11: the suggestion appears in the completion menu as you type.
    vim.api.nvim_create_autocmd('LspAttach', {
      group = vim.api.nvim_create_augroup('lsp_coder', { clear = true }),
      callback = function(args)
        local client = vim.lsp.get_client_by_id(args.data.client_id)
        if client and client.name == 'lsp_coder' then
          vim.lsp.completion.enable(true, client.id, args.buf, { autotrigger = true })
        end
      end,
    })
  end
  return
end

---------------------------------------------------------------------------------------------
-- Older Neovim: start (or reuse) the server when a buffer of a listed filetype opens.
-- Completion is the omnifunc, which Neovim sets when a client attaches: <C-x><C-o>.
---------------------------------------------------------------------------------------------
local function find_root(file)
  if vim.fs ~= nil and vim.fs.root ~= nil then -- 0.10
    return vim.fs.root(file, root_markers)
  end
  local dir = vim.fn.fnamemodify(file, ':p:h')
  for _, marker in ipairs(root_markers) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found == '' then
      found = vim.fn.findfile(marker, dir .. ';')
    end
    if found ~= '' then
      return vim.fn.fnamemodify(found, ':p:h:h')
    end
  end
  return nil
end

local legacy_clients = {} -- root directory -> client id (0.7 only)

local function start_legacy(args)
  local root = find_root(vim.api.nvim_buf_get_name(args.buf)) or vim.fn.getcwd()
  local config = {
    name = 'lsp_coder',
    cmd = cmd,
    root_dir = root,
    init_options = init_options,
  }
  if vim.lsp.start ~= nil then -- 0.8+: reuses a running client with the same name and root
    vim.lsp.start(config, { bufnr = args.buf })
    return
  end
  local id = legacy_clients[root]
  if id == nil or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(config)
    legacy_clients[root] = id
  end
  if id ~= nil then
    vim.lsp.buf_attach_client(args.buf, id)
    vim.bo[args.buf].omnifunc = 'v:lua.vim.lsp.omnifunc'
  end
end

vim.api.nvim_create_autocmd('FileType', {
  group = vim.api.nvim_create_augroup('lsp_coder', { clear = true }),
  pattern = filetypes,
  callback = start_legacy,
})
