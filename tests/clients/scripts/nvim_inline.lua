-- Neovim 0.12 client test of editors/neovim (the plugin) with inline ghost text: run with
--   LSP_CODER_TEST_PARAMS=params.json \
--     nvim --headless -u NONE -i NONE -n -c "luafile nvim_inline.lua"
--
-- params.json: {plugin_root, cmd, init_options, full_file, part_file, load_timeout_ms,
--               ghost_timeout_ms, out}
-- Loads the plugin the way a plugin manager does (its folder on 'runtimepath', then its
-- plugin/ files), calls setup{}, and types in insert mode with the keys the plugin maps:
--   full_file: <Tab> accepts the whole suggestion;
--   part_file: <M-Right> accepts its next word, <M-C-Right> the rest of its line;
-- then :LspCoder status, stats and toggle. Writes what each step showed and left in the
-- buffer as JSON to `out` ({error, messages} on a failure), then quits.
-- The steps run in a coroutine resumed by timers: typed keys are only read by Neovim's main
-- loop, which runs between the steps.

local params = vim.json.decode(table.concat(vim.fn.readfile(vim.env.LSP_CODER_TEST_PARAMS), "\n"))
local messages = {}
local result = { version = tostring(vim.version()) }

vim.lsp.handlers["window/logMessage"] = function(_, msg) table.insert(messages, msg.message) end
vim.lsp.handlers["window/showMessage"] = vim.lsp.handlers["window/logMessage"]

local co

--- Yields until `predicate()` is true; errors with `what` after `timeout_ms`.
local function wait_until(what, predicate, timeout_ms)
  local deadline = vim.uv.now() + timeout_ms
  while true do
    local value = predicate()
    if value then
      return value
    end
    if vim.uv.now() > deadline then
      error("timed out waiting for " .. what)
    end
    vim.defer_fn(function()
      local ok, err = coroutine.resume(co)
      if not ok then
        error(err)
      end
    end, 20)
    coroutine.yield()
  end
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "m", false)
end

local function client()
  return require("lsp-coder").clients(0)[1]
end

local function totals()
  return require("lsp-coder.commands").totals(client())
end

--- The ghost text shown in the current buffer (its lines joined), or nil.
local function ghost_text()
  local ns = vim.api.nvim_get_namespaces()["nvim.lsp.inline_completion"]
  if ns == nil then
    return nil
  end
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
    local details = mark[4]
    local lines = {}
    local first = {}
    for _, chunk in ipairs(details.virt_text or {}) do
      table.insert(first, chunk[1])
    end
    table.insert(lines, table.concat(first))
    for _, virt_line in ipairs(details.virt_lines or {}) do
      local parts = {}
      for _, chunk in ipairs(virt_line) do
        table.insert(parts, chunk[1])
      end
      table.insert(lines, table.concat(parts))
    end
    local text = table.concat(lines, "\n")
    if text:find("%S") then
      return text
    end
  end
  return nil
end

local function lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

--- Opens `file` and starts typing at the end of its last line.
local function open_and_insert(file)
  vim.cmd("stopinsert")
  wait_until("normal mode", function() return vim.api.nvim_get_mode().mode == "n" end, 2000)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  vim.bo.filetype = "python"
  wait_until("the lsp_coder client", function()
    local c = client()
    return c and c.initialized
  end, params.load_timeout_ms)
  press("G$a")
  wait_until("insert mode", function() return vim.api.nvim_get_mode().mode == "i" end, 2000)
end

local function run()
  vim.opt.runtimepath:append(params.plugin_root)
  vim.cmd("runtime! plugin/lsp-coder.lua")
  require("lsp-coder").setup({
    cmd = params.cmd,
    init_options = params.init_options,
    filetypes = { "python" },
  })
  result.mode = require("lsp-coder").mode()

  open_and_insert(params.full_file)
  wait_until("the model", function()
    local t = totals()
    if t and t.error ~= nil and t.error ~= vim.NIL then
      error("the model failed to load: " .. tostring(t.error))
    end
    return t and t.model_loaded
  end, params.load_timeout_ms)
  -- The first request may have been answered while the model loaded: move to ask again.
  press("<Space><BS>")
  result.full_ghost = wait_until("ghost text", ghost_text, params.ghost_timeout_ms)
  result.full_before = lines()
  local accepted_before = totals().accepted
  press("<Tab>")
  wait_until("the accepted text", function()
    return table.concat(lines(), "\n") ~= table.concat(result.full_before, "\n")
  end, 5000)
  result.full_after = lines()
  result.accepted = wait_until("lspCoder.accepted", function()
    local n = totals().accepted
    return n > accepted_before and n
  end, 5000) - accepted_before

  open_and_insert(params.part_file)
  result.part_ghost = wait_until("ghost text", ghost_text, params.ghost_timeout_ms)
  result.part_before = lines()
  press("<M-Right>")
  wait_until("the accepted word", function()
    return table.concat(lines(), "\n") ~= table.concat(result.part_before, "\n")
  end, 5000)
  result.after_word = lines()
  result.rest_ghost = wait_until("the rest as ghost text", ghost_text, params.ghost_timeout_ms)
  press("<M-C-Right>")
  wait_until("the accepted line", function()
    return table.concat(lines(), "\n") ~= table.concat(result.after_word, "\n")
  end, 5000)
  result.after_line = lines()

  result.status = vim.api.nvim_exec2("LspCoder status", { output = true }).output
  result.stats = vim.api.nvim_exec2("LspCoder stats", { output = true }).output
  result.toggle_off = vim.api.nvim_exec2("LspCoder toggle", { output = true }).output
  result.enabled_after_off = vim.lsp.inline_completion.is_enabled({ client_id = client().id })
  result.status_off = vim.api.nvim_exec2("LspCoder status", { output = true }).output
  result.toggle_on = vim.api.nvim_exec2("LspCoder toggle", { output = true }).output
  result.enabled_after_on = vim.lsp.inline_completion.is_enabled({ client_id = client().id })
end

co = coroutine.create(function()
  local ok, err = pcall(run)
  if not ok then
    result = { error = tostring(err) }
  end
  result.messages = messages
  vim.fn.writefile({ vim.json.encode(result) }, params.out)
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop(true)
  end
  vim.cmd("qa!")
end)
local ok, err = coroutine.resume(co)
if not ok then
  vim.fn.writefile({ vim.json.encode({ error = tostring(err), messages = messages }) }, params.out)
  vim.cmd("qa!")
end
