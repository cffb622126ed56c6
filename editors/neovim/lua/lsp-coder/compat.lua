-- What differs between Neovim 0.7 and 0.12 in the calls the plugin makes.
local M = {}

local METHODS = vim.fn.has('nvim-0.11') == 1 -- client:request() rather than client.request()

--- Sends a request to `client`; returns its id, or nil when it could not be sent.
function M.request(client, method, params, handler, bufnr)
  local ok, id
  if METHODS then
    ok, id = client:request(method, params, handler, bufnr)
  else
    ok, id = client.request(method, params, handler, bufnr)
  end
  return ok and id or nil
end

--- Cancels request `id` of `client`.
function M.cancel(client, id)
  if METHODS then
    client:cancel_request(id)
  else
    client.cancel_request(id)
  end
end

--- Runs the server's `command` (an LSP Command) through workspace/executeCommand.
function M.execute(client, command, bufnr)
  M.request(client, 'workspace/executeCommand',
    { command = command.command, arguments = command.arguments }, function() end, bufnr)
end

--- The client capabilities Neovim sends, with the experimental `lspCoderGhostText` when the
--- plugin draws ghost text: the server then keeps its suggestion out of completion lists.
function M.capabilities(ghost_text)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  if ghost_text then
    capabilities.experimental = vim.tbl_extend('force', capabilities.experimental or {},
      { lspCoderGhostText = true })
  end
  return capabilities
end

--- The byte column in `line` of the LSP position `character` in `encoding`.
function M.byte_col(line, character, encoding)
  if encoding == 'utf-8' then
    return math.min(character, #line)
  end
  local ok, col
  if METHODS then
    ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, character, encoding ~= 'utf-32')
  end
  return ok and math.min(col, #line) or #line
end

M.uv = vim.uv or vim.loop

return M
