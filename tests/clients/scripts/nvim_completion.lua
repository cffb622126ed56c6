-- Neovim 0.7 client test: run with
--   LSP_CODER_TEST_PARAMS=params.json \
--     nvim --headless -u NONE -i NONE -n -c "luafile nvim_completion.lua"
--
-- params.json: {cmd, init_options, file, filetype, line, character, load_timeout_ms,
--               request_timeout_ms, out, plugin_root, wait_editors}
-- With `wait_editors` the script waits, once the model is loaded, until that many editors
-- share it (lspCoder.stats' `editors`) before it asks for a completion.
-- With `plugin_root` (editors/neovim) the script loads the plugin the way a plugin manager
-- does (its folder on 'runtimepath', then its plugin/ files), calls setup{} with the menu
-- instead of ghost text (ghost_text = false: the omnifunc) and lets it start the server on
-- FileType; otherwise it starts the client itself with vim.lsp.start_client.
-- Writes {stats, result, capabilities, messages} (and with the plugin, the output of
-- :LspCoder status) (or {error, messages}) as JSON to `out`, then quits. Every failure is
-- reported in `out`; a missing `out` means nvim itself failed.

local params = vim.json.decode(table.concat(vim.fn.readfile(vim.env.LSP_CODER_TEST_PARAMS), "\n"))
local messages = {}
local server_exit = nil
local shared_status = nil

local function write(result)
  result.messages = messages
  vim.fn.writefile({ vim.json.encode(result) }, params.out)
end

local function note(_, result)
  table.insert(messages, result.message)
end
-- Global handlers, so that they also apply to a client the user config starts.
vim.lsp.handlers["window/logMessage"] = note
vim.lsp.handlers["window/showMessage"] = note

--- Starts the client directly; returns its id and the buffer it is attached to.
local function start_directly()
  local client_id = vim.lsp.start_client({
    name = "lsp-coder",
    cmd = params.cmd,
    root_dir = vim.fn.fnamemodify(params.file, ":h"),
    init_options = params.init_options,
    on_exit = function(code, signal)
      server_exit = { code = code, signal = signal }
    end,
  })
  if not client_id then
    error("vim.lsp.start_client returned nil for " .. vim.inspect(params.cmd))
  end
  vim.cmd("edit " .. vim.fn.fnameescape(params.file))
  local buf = vim.api.nvim_get_current_buf()
  -- NOTE: -u NONE turns filetype detection off; the filetype is the LSP languageId.
  vim.bo[buf].filetype = params.filetype
  vim.lsp.buf_attach_client(buf, client_id)
  return client_id, buf
end

--- Loads the plugin, opens the file and waits for the plugin to attach its client.
local function start_with_plugin()
  vim.cmd("filetype on")
  vim.opt.runtimepath:append(params.plugin_root)
  vim.cmd("runtime! plugin/lsp-coder.lua")
  require("lsp-coder").setup({ cmd = params.cmd, init_options = params.init_options,
    ghost_text = false })
  vim.cmd("edit " .. vim.fn.fnameescape(params.file))
  local buf = vim.api.nvim_get_current_buf()
  local client_id
  vim.wait(10000, function()
    for id, c in pairs(vim.lsp.buf_get_clients(buf)) do
      if c.name == "lsp_coder" then
        client_id = id
      end
    end
    return client_id ~= nil
  end, 20)
  if client_id == nil then
    error("the plugin attached no lsp_coder client (filetype "
      .. vim.inspect(vim.bo[buf].filetype) .. ")")
  end
  if vim.bo[buf].omnifunc ~= "v:lua.vim.lsp.omnifunc" then
    error("the plugin did not set omnifunc: " .. vim.inspect(vim.bo[buf].omnifunc))
  end
  return client_id, buf
end

local function run()
  local client_id, buf
  if params.plugin_root then
    client_id, buf = start_with_plugin()
  else
    client_id, buf = start_directly()
  end
  local client = vim.lsp.get_client_by_id(client_id)
  local function gone()
    return server_exit ~= nil or client.is_stopped()
  end

  local initialized = vim.wait(params.load_timeout_ms, function()
    return client.initialized or gone()
  end, 20)
  if gone() or not initialized then
    error("the server did not initialize: exit " .. vim.inspect(server_exit))
  end

  local stats
  local loaded = vim.wait(params.load_timeout_ms, function()
    if gone() then
      return true
    end
    local response = client.request_sync("workspace/executeCommand",
      { command = "lspCoder.stats", arguments = {} }, 5000, buf)
    if response and response.err then
      error("lspCoder.stats failed: " .. vim.inspect(response.err))
    end
    stats = response and response.result
    local totals = stats and stats.totals or {}
    if totals.error ~= nil and totals.error ~= vim.NIL then
      error("the model failed to load: " .. tostring(totals.error))
    end
    return totals.model_loaded == true
  end, 200)
  if gone() or not loaded then
    error("the model did not load: exit " .. vim.inspect(server_exit) .. ", stats "
      .. vim.inspect(stats))
  end
  if params.wait_editors then
    local together = vim.wait(params.load_timeout_ms, function()
      local response = client.request_sync("workspace/executeCommand",
        { command = "lspCoder.stats", arguments = {} }, 5000, buf)
      stats = response and response.result or stats
      return (stats.totals.editors or 0) >= params.wait_editors and not stats.totals.loading
    end, 100)
    if not together then
      error("the other editors never came: " .. vim.inspect(stats.totals.editors))
    end
    -- The status while the editors are known to share the model: after the completion
    -- another editor may already have left.
    shared_status = params.plugin_root and vim.api.nvim_exec("LspCoder status", true) or nil
  end

  local responses, reason = vim.lsp.buf_request_sync(buf, "textDocument/completion", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = params.line, character = params.character },
    context = { triggerKind = 1 },
  }, params.request_timeout_ms)
  if not responses then
    error("textDocument/completion got no response: " .. tostring(reason))
  end
  local response = responses[client_id]
  if response == nil then
    error("no response from the lsp-coder client: " .. vim.inspect(responses))
  end
  if response.err then
    error("textDocument/completion failed: " .. vim.inspect(response.err))
  end

  write({
    stats = stats,
    result = response.result,
    capabilities = client.server_capabilities,
    status = shared_status
      or (params.plugin_root and vim.api.nvim_exec("LspCoder status", true) or nil),
  })

  client.stop()
  if not vim.wait(5000, function() return client.is_stopped() end, 20) then
    client.stop(true)
  end
end

local ok, err = pcall(run)
if not ok then
  write({ error = tostring(err) })
end
vim.cmd("qa!")
