-- :LspCoder toggle | status | stats
local M = {}

local function lsp_coder()
  return require('lsp-coder')
end

local function request_sync(client, method, params, timeout_ms, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

--- The server's counters (lspCoder.stats `totals`), or nil and why not.
function M.totals(client)
  local response, err = request_sync(client, 'workspace/executeCommand',
    { command = 'lspCoder.stats', arguments = {} }, 2000, vim.api.nvim_get_current_buf())
  if response == nil then
    return nil, tostring(err)
  end
  if response.err then
    return nil, response.err.message
  end
  return response.result.totals
end

local MODES = {
  ghost = 'ghost text',
  menu = 'the completion menu',
  omnifunc = 'omnifunc (<C-x><C-o>)',
}

local function model_state(totals)
  if totals.loading then
    return 'loading the model'
  end
  if totals.error ~= nil and totals.error ~= vim.NIL then
    return 'no model: ' .. tostring(totals.error)
  end
  if not totals.model_loaded then
    return 'not loaded'
  end
  local editors = tonumber(totals.editors) or 1
  if editors > 1 then
    return ('ready, the model shared by %d editors'):format(editors)
  end
  return 'ready'
end

--- Lines that say whether suggestions are on, how they show and each server's state.
function M.status_lines()
  local state = lsp_coder()
  if state.options == nil then
    return { "lsp-coder: not set up; call require('lsp-coder').setup({})" }
  end
  local lines = {
    ('lsp-coder: suggestions %s, shown as %s'):format(state.enabled and 'on' or 'off',
      MODES[state.mode()]),
  }
  local clients = state.clients()
  if #clients == 0 then
    table.insert(lines, 'server: not running (open a file of a configured filetype)')
  end
  for _, client in ipairs(clients) do
    local totals, err = M.totals(client)
    table.insert(lines, ('server %d: %s'):format(client.id,
      totals and model_state(totals) or ('no answer: ' .. tostring(err))))
  end
  return lines
end

local FIGURES = {
  { 'requests', 'requests' },
  { 'shown', 'suggestions shown' },
  { 'accepted', 'suggestions accepted' },
  { 'cache_hits', 'answered from the suggestion cache' },
  { 'superseded', 'superseded by a newer keystroke' },
  { 'cancelled', 'cancelled by the editor' },
  { 'prompt_tokens', 'prompt tokens' },
  { 'reused_tokens', 'prompt tokens reused from the cache' },
  { 'evaluated_tokens', 'prompt tokens evaluated' },
  { 'generated_tokens', 'tokens generated' },
  { 'prefill_ms', 'prompt evaluation, ms' },
  { 'decode_ms', 'generation, ms' },
  { 'draft_accepted', 'draft tokens accepted' },
  { 'draft_proposed', 'draft tokens proposed' },
}

--- The server's counters, one readable line each.
function M.stats_lines()
  local clients = lsp_coder().clients()
  if #clients == 0 then
    return { 'lsp-coder: no server running' }
  end
  local lines = {}
  for _, client in ipairs(clients) do
    local totals, err = M.totals(client)
    if totals == nil then
      table.insert(lines, ('server %d: no answer: %s'):format(client.id, tostring(err)))
    else
      table.insert(lines, ('lsp-coder server %d (%s)'):format(client.id, model_state(totals)))
      for _, figure in ipairs(FIGURES) do
        local value = totals[figure[1]]
        if type(value) == 'number' then
          table.insert(lines, ('  %-36s %s'):format(figure[2], tostring(value)))
        end
      end
    end
  end
  return lines
end

local function show(lines)
  local chunks = {}
  for i, line in ipairs(lines) do
    table.insert(chunks, { line .. (i < #lines and '\n' or '') })
  end
  vim.api.nvim_echo(chunks, true, {})
end

local COMMANDS = {
  toggle = function()
    if lsp_coder().options == nil then
      return show(M.status_lines())
    end
    local on = lsp_coder().toggle()
    show({ 'lsp-coder: suggestions ' .. (on and 'on' or 'off') })
  end,
  status = function() show(M.status_lines()) end,
  stats = function() show(M.stats_lines()) end,
}

function M.names()
  return { 'toggle', 'status', 'stats' }
end

function M.run(name)
  local command = COMMANDS[name or 'status']
  if command == nil then
    vim.api.nvim_echo({ { 'lsp-coder: unknown subcommand ' .. tostring(name)
      .. '; use toggle, status or stats', 'ErrorMsg' } }, true, {})
    return
  end
  command()
end

return M
