-- Neovim 0.12+: insert-mode keys for the inline suggestion. Accept all of it, its next word or
-- the rest of its line; show the next or previous one.
local M = {}

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

--- Inserts `part` of the item's text where the item would go and puts the cursor after it;
--- the server answers the next request (the cursor moved) with the rest, from its cache.
local function insert_part(item, part)
  local bufnr = vim.api.nvim_get_current_buf()
  local lines = vim.split(part, '\n', { plain = true })
  local row, col, end_row, end_col
  if item.range then
    row, col = item.range.start.row, item.range.start.col
    end_row, end_col = item.range.end_.row, item.range.end_.col
  else
    local cursor = vim.api.nvim_win_get_cursor(0)
    row, col = cursor[1] - 1, cursor[2]
    end_row, end_col = row, col
  end
  vim.api.nvim_buf_set_text(bufnr, row, col, end_row, end_col, lines)
  local last_col = (#lines == 1 and col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { row + #lines, last_col })
end

--- Accepts the part of the current suggestion that `pick` chooses; false without one.
function M.accept_part(pick)
  return vim.lsp.inline_completion.get({
    on_accept = function(item)
      local text = item.insert_text
      if type(text) ~= 'string' then
        text = text.value
      end
      local part = pick(text)
      if part == text then
        -- All of it: Neovim's own accept also runs the item's command (lspCoder.accepted).
        local client = vim.lsp.get_client_by_id(item.client_id)
        insert_part(item, part)
        if item.command and client then
          client:exec_cmd(item.command, { bufnr = vim.api.nvim_get_current_buf() })
        end
        return
      end
      insert_part(item, part)
    end,
  })
end

local function accept_all()
  return vim.lsp.inline_completion.get()
end

local ACTIONS = {
  accept = { accept_all, 'Accept the inline suggestion' },
  accept_word = {
    function() return M.accept_part(M.next_word) end,
    'Accept the next word of the inline suggestion',
  },
  accept_line = {
    function() return M.accept_part(M.next_line) end,
    'Accept the rest of the line of the inline suggestion',
  },
}

--- Maps each configured key in insert mode; a key with no suggestion shown does what it
--- does without lsp-coder.
function M.map_keys(keymaps)
  for name, action in pairs(ACTIONS) do
    local lhs = keymaps[name]
    if lhs then
      vim.keymap.set('i', lhs, function()
        if not action[1]() then
          return lhs
        end
      end, { expr = true, replace_keycodes = true, desc = action[2] })
    end
  end
  for name, count in pairs({ next = 1, prev = -1 }) do
    local lhs = keymaps[name]
    if lhs then
      vim.keymap.set('i', lhs, function()
        vim.lsp.inline_completion.select({ count = count })
      end, { desc = (count > 0 and 'Next' or 'Previous') .. ' inline suggestion' })
    end
  end
end

return M
