-- Asks lsp-coder for the ghost text: textDocument/inlineCompletion at the cursor, after each
-- key (debounced) or when the user asks; hands each answer that still fits the cursor and the
-- text to lsp-coder.ghost. A newer request or a dismissal drops the older answers.
local compat = require('lsp-coder.compat')

local M = {}

--- Milliseconds after the last key before asking (setup's debounce_ms).
M.debounce_ms = 75

local INVOKED, AUTOMATIC = 1, 2 -- InlineCompletionTriggerKind

local generation = 0 -- bumped by each request and each cancel: older answers are dropped
local pending = {} -- client id -> the id of its request in flight
local timer = nil

local function lsp_coder()
  return require('lsp-coder')
end

local function ghost()
  return require('lsp-coder.ghost')
end

local function cancel_pending()
  for client_id, id in pairs(pending) do
    local client = vim.lsp.get_client_by_id(client_id)
    if client then
      compat.cancel(client, id)
    end
  end
  pending = {}
end

--- Drops the answers on their way and the request waiting for its debounce.
function M.cancel()
  generation = generation + 1
  if timer then
    timer:stop()
  end
  cancel_pending()
end

--- The items of an answer, each cut to start at the cursor (an item whose range starts
--- before it must match the text typed there).
local function collect(result, client, bufnr, row, col)
  local line = ghost().line_at(bufnr, row)
  local items, seen = {}, {}
  for _, item in ipairs(result.items or result) do
    local text = item.insertText
    if type(text) == 'table' then
      text = text.value
    end
    local start = col
    if item.range and item.range.start.line == row then
      start = compat.byte_col(line, item.range.start.character, client.offset_encoding)
    end
    if type(text) == 'string' and start <= col
        and text:sub(1, col - start) == line:sub(start + 1, col) then
      text = text:sub(col - start + 1)
      if text ~= '' and not seen[text] then
        seen[text] = true
        table.insert(items, { text = text, col = col, command = item.command,
          client_id = client.id })
      end
    end
  end
  return items
end

--- Asks each lsp-coder client of the buffer for a suggestion at the cursor; `invoked`: the
--- user asked (the server answers at once, with alternatives). `arrange(items)`, when given,
--- orders the answer's items and returns the index to show.
function M.request(invoked, arrange)
  local bufnr = vim.api.nvim_get_current_buf()
  local clients = lsp_coder().clients(bufnr)
  if #clients == 0 or not ghost().in_insert_mode() then
    return
  end
  cancel_pending()
  generation = generation + 1
  local asked = generation
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local row, col = ghost().cursor()
  for _, client in ipairs(clients) do
    local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
    params.context = { triggerKind = invoked and INVOKED or AUTOMATIC }
    local id
    id = compat.request(client, 'textDocument/inlineCompletion', params, function(err, result)
      if pending[client.id] == id then
        pending[client.id] = nil
      end
      if err or result == nil or asked ~= generation or not lsp_coder().enabled
          or vim.api.nvim_get_current_buf() ~= bufnr or not ghost().in_insert_mode()
          or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or vim.fn.pumvisible() == 1 then
        return
      end
      local now_row, now_col = ghost().cursor()
      if now_row ~= row or now_col ~= col then
        return
      end
      local items = collect(result, client, bufnr, row, col)
      if #items == 0 then
        return
      end
      ghost().show(bufnr, items, arrange and arrange(items) or 1)
    end, bufnr)
    pending[client.id] = id
  end
end

--- Asks for a suggestion `debounce_ms` after the last key (typed, not invoked).
function M.schedule()
  if not lsp_coder().enabled then
    return
  end
  timer = timer or compat.uv.new_timer()
  timer:stop()
  timer:start(M.debounce_ms, 0, vim.schedule_wrap(function()
    M.request(false)
  end))
end

return M
