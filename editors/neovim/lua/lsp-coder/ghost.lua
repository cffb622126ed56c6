-- Ghost text on every Neovim from 0.7: lsp-coder.ask asks for the suggestion
-- (textDocument/inlineCompletion, as you type) and this module draws it with an extmark
-- (virtual text on the cursor's line, virtual lines below it). Accept all of it, its next word or the
-- rest of its line; cycle through others; dismiss. It goes away when insert mode ends, the
-- buffer or window changes, or the text typed no longer matches it.
local compat = require('lsp-coder.compat')

local M = {}

M.NAMESPACE = vim.api.nvim_create_namespace('lsp-coder.ghost')
M.HIGHLIGHT = 'LspCoderSuggestion'

--- The suggestion on screen, or nil: {bufnr, row, line (the cursor's line when it came),
--- items = {{text (from `col` on), col (byte column where it starts), command, client_id}},
--- index (the item shown)}.
local shown = nil

local function lsp_coder()
  return require('lsp-coder')
end

local function cursor()
  local pos = vim.api.nvim_win_get_cursor(0)
  return pos[1] - 1, pos[2]
end

local function line_at(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
end

local function in_insert_mode()
  return vim.api.nvim_get_mode().mode:sub(1, 1) == 'i'
end
M.in_insert_mode = in_insert_mode
M.cursor = cursor
M.line_at = line_at

--- What is left to show of the current item: nil when nothing is shown or the text typed
--- since it came no longer matches it (or the cursor left its line or buffer).
local function remainder()
  if shown == nil or shown.bufnr ~= vim.api.nvim_get_current_buf() then
    return nil
  end
  local item = shown.items[shown.index]
  local row, col = cursor()
  if row ~= shown.row or col < item.col then
    return nil
  end
  local line = line_at(shown.bufnr, row)
  if line:sub(1, item.col) ~= shown.line:sub(1, item.col) then
    return nil
  end
  local typed = line:sub(item.col + 1, col)
  if item.text:sub(1, #typed) ~= typed or #typed >= #item.text then
    return nil
  end
  return item.text:sub(#typed + 1)
end

local function undraw()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      vim.api.nvim_buf_clear_namespace(bufnr, M.NAMESPACE, 0, -1)
    end
  end
end

--- Draws `rest` at the cursor: its first line as virtual text (over the empty end of the
--- line, or inline before the text after the cursor on 0.10+, else at the end of the line),
--- the others as virtual lines below.
local function draw(rest)
  vim.api.nvim_buf_clear_namespace(shown.bufnr, M.NAMESPACE, 0, -1)
  local row, col = cursor()
  local tab = string.rep(' ', vim.bo[shown.bufnr].tabstop)
  local lines = {}
  for _, line in ipairs(vim.split(rest, '\n', { plain = true })) do
    table.insert(lines, (line:gsub('\t', tab)))
  end
  local mark = { hl_mode = 'combine' }
  if lines[1] ~= '' then
    mark.virt_text = { { lines[1], M.HIGHLIGHT } }
    if col >= #line_at(shown.bufnr, row) then
      mark.virt_text_pos = 'overlay'
    elseif vim.fn.has('nvim-0.10') == 1 then
      mark.virt_text_pos = 'inline'
    else
      mark.virt_text_pos = 'eol'
    end
  end
  if #lines > 1 then
    mark.virt_lines = {}
    for i = 2, #lines do
      table.insert(mark.virt_lines, { { lines[i], M.HIGHLIGHT } })
    end
  end
  vim.api.nvim_buf_set_extmark(shown.bufnr, M.NAMESPACE, row, col, mark)
end

--- Takes the suggestion off the screen (an answer on its way may still show one).
local function hide()
  shown = nil
  undraw()
end

local function ask()
  return require('lsp-coder.ask')
end

--- Hides the suggestion and drops the answers on their way.
function M.clear()
  ask().cancel()
  hide()
end

--- Shows `items` (each {text (from `col` on), col, command, client_id}), the one at `index`,
--- for the cursor's place in `bufnr`.
function M.show(bufnr, items, index)
  local row = cursor()
  shown = { bufnr = bufnr, row = row, line = line_at(bufnr, row), items = items, index = index }
  M.refresh()
end

--- Redraws the suggestion after a key: what is left of it, or nothing when the text typed
--- no longer matches it.
function M.refresh()
  local rest = vim.fn.pumvisible() == 0 and remainder() or nil
  if rest then
    draw(rest)
  elseif shown then
    hide()
  end
end

--- Whether a suggestion shows at the cursor.
function M.visible()
  return remainder() ~= nil
end

--- The next word of `text`: leading blanks (newlines included), then a run of word
--- characters or a run of other non-blank characters.
function M.next_word(text)
  return text:match('^%s*[%w_]+') or text:match('^%s*[^%w_%s]+') or text
end

--- The rest of the first line of `text`; when `text` starts with a line break, that break
--- and the line after it.
function M.next_line(text)
  return text:match('^\n[^\n]*') or text:match('^[^\n]+') or text
end

local PICKS = {
  all = function(text) return text end,
  word = M.next_word,
  line = M.next_line,
}

--- Inserts the part of the suggestion that `pick` ('all', 'word' or 'line') chooses at the
--- cursor and puts the cursor after it; false when no suggestion shows. The whole of it runs
--- the item's command (the server counts the acceptance); what is left of it stays shown.
function M.accept(pick)
  local rest = remainder()
  if rest == nil then
    return false
  end
  local item = shown.items[shown.index]
  local part = PICKS[pick or 'all'](rest)
  local bufnr = shown.bufnr
  local row, col = cursor()
  local lines = vim.split(part, '\n', { plain = true })
  vim.api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
  local end_row = row + #lines - 1
  local end_col = (#lines == 1 and col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { end_row + 1, end_col })
  if part == rest then
    local client = vim.lsp.get_client_by_id(item.client_id)
    if item.command and client then
      compat.execute(client, item.command, bufnr)
    end
    hide()
  else
    shown = { bufnr = bufnr, row = end_row, line = line_at(bufnr, end_row), index = 1,
      items = { { text = rest:sub(#part + 1), col = end_col, command = item.command,
        client_id = item.client_id } } }
    M.refresh()
  end
  return true
end

--- Shows the next (`delta` 1) or previous (-1) suggestion; with only one, asks the server
--- for others. False when no suggestion shows.
function M.cycle(delta)
  local rest = remainder()
  if rest == nil then
    return false
  end
  if #shown.items > 1 then
    shown.index = (shown.index - 1 + delta) % #shown.items + 1
    M.refresh()
    return true
  end
  ask().request(true, function(items)
    for i, item in ipairs(items) do
      if item.text == rest then
        table.remove(items, i)
        break
      end
    end
    table.insert(items, 1, { text = rest, col = items[1].col, command = items[1].command,
      client_id = items[1].client_id })
    if #items == 1 then
      return 1
    end
    return delta > 0 and 2 or #items
  end)
  return true
end

--- Asks for a suggestion now (as the user's request: alternatives come with it).
function M.suggest()
  ask().request(true)
  return true
end

--- Hides the suggestion until the next key; false when none shows.
function M.dismiss()
  if not M.visible() then
    return false
  end
  M.clear()
  return true
end

local function define_highlight()
  vim.cmd('highlight default link ' .. M.HIGHLIGHT .. ' Comment')
end

--- Starts asking as you type in buffers with an lsp-coder client.
function M.start(opts)
  ask().debounce_ms = opts.debounce_ms
  define_highlight()
  local group = vim.api.nvim_create_augroup('lsp_coder_ghost', { clear = true })
  vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = define_highlight })
  vim.api.nvim_create_autocmd({ 'InsertEnter', 'TextChangedI', 'CursorMovedI' }, {
    group = group,
    callback = function(args)
      M.refresh()
      if #lsp_coder().clients(args.buf) > 0 then
        ask().schedule()
      end
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave', 'WinLeave' }, {
    group = group,
    callback = M.clear,
  })
  if vim.fn.exists('##ModeChanged') == 1 then
    vim.api.nvim_create_autocmd('ModeChanged', {
      group = group,
      callback = function()
        if not in_insert_mode() then
          M.clear()
        end
      end,
    })
  end
end

return M
