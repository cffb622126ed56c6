-- Neovim 0.7-0.10: start (or reuse) the server when a buffer of a listed filetype opens.
-- Without ghost text, completion is the omnifunc, set when the client attaches: <C-x><C-o>.
local M = {}

local OMNIFUNC = 'v:lua.vim.lsp.omnifunc'

local function find_root(file, markers)
  if vim.fs ~= nil and vim.fs.root ~= nil then -- 0.10
    return vim.fs.root(file, markers)
  end
  local dir = vim.fn.fnamemodify(file, ':p:h')
  for _, marker in ipairs(markers) do
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

--- Sets or clears the omnifunc of each buffer the client is attached to.
function M.apply(client, enabled)
  for bufnr in pairs(client.attached_buffers or {}) do
    vim.bo[bufnr].omnifunc = enabled and OMNIFUNC or ''
  end
end

local started = {} -- root directory -> client id (0.7 only)

local function attach(opts, mode, args)
  local root = find_root(vim.api.nvim_buf_get_name(args.buf), opts.root_markers)
    or vim.fn.getcwd()
  local config = {
    name = require('lsp-coder').NAME,
    cmd = opts.cmd,
    root_dir = root,
    init_options = opts.init_options,
    capabilities = require('lsp-coder.compat').capabilities(mode == 'ghost'),
  }
  local id
  if vim.lsp.start ~= nil then -- 0.8+: reuses a running client with the same name and root
    id = vim.lsp.start(config, { bufnr = args.buf })
  else
    id = started[root]
    if id == nil or vim.lsp.client_is_stopped(id) then
      id = vim.lsp.start_client(config)
      started[root] = id
    end
    if id ~= nil then
      vim.lsp.buf_attach_client(args.buf, id)
    end
  end
  if id ~= nil and mode == 'omnifunc' and require('lsp-coder').enabled then
    vim.bo[args.buf].omnifunc = OMNIFUNC
  end
end

function M.start(opts, mode)
  vim.api.nvim_create_autocmd('FileType', {
    group = vim.api.nvim_create_augroup('lsp_coder', { clear = true }),
    pattern = opts.filetypes,
    callback = function(args)
      attach(opts, mode, args)
    end,
  })
end

return M
