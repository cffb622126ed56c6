-- Insert-mode keys for the ghost text that never take the user's own: each key acts only
-- while a suggestion shows; otherwise it does what it did before the plugin mapped it (the
-- global mapping it found, called the way that mapping was defined, or the key itself).
-- A buffer-local mapping (nvim-cmp's, a snippet plugin's) stays in front of these, and a
-- mapping made after setup() replaces the plugin's: both can call require('lsp-coder').accept().
local M = {}

local function ghost()
  return require('lsp-coder.ghost')
end

local ACTIONS = {
  accept = { function() return ghost().accept('all') end, 'Accept the suggestion' },
  accept_word = { function() return ghost().accept('word') end,
    'Accept the next word of the suggestion' },
  accept_line = { function() return ghost().accept('line') end,
    'Accept the rest of the line of the suggestion' },
  next = { function() return ghost().cycle(1) end, 'Next suggestion' },
  prev = { function() return ghost().cycle(-1) end, 'Previous suggestion' },
  dismiss = { function() return ghost().dismiss() end, 'Dismiss the suggestion' },
}
local SUGGEST = { function() return ghost().suggest() end, 'Ask for a suggestion' }

local DESC_PREFIX = 'lsp-coder: '

local function termcodes(keys)
  return vim.api.nvim_replace_termcodes(keys, true, true, true)
end

--- Functions the <Cmd> keys returned by the mappings call: actions and Lua mappings found.
local calls = {}

--- The keys that call `fn` (after the expression mapping returns, outside its text lock).
local function call_keys(fn)
  table.insert(calls, fn)
  return termcodes(('<Cmd>lua require("lsp-coder.keys").call(%d)<CR>'):format(#calls))
end

function M.call(index)
  calls[index]()
end

--- The global insert-mode mapping of `lhs` (nvim_get_keymap's record), or nil.
local function global_mapping(lhs)
  local raw = termcodes(lhs)
  for _, map in ipairs(vim.api.nvim_get_keymap('i')) do
    if termcodes(map.lhs) == raw then
      return map
    end
  end
  return nil
end

--- A function (run inside our expression mapping) returning the keys that do what `map`
--- did: its right-hand side, what its expression returns, or keys calling its Lua function;
--- the key itself when there was no mapping.
local function fallback(lhs, map)
  if map == nil then
    local keys = termcodes(lhs)
    return function() return keys end
  end
  if map.callback then
    if map.expr == 1 then
      return function()
        local keys = map.callback() or ''
        return map.replace_keycodes == 1 and termcodes(keys) or keys
      end
    end
    local keys = call_keys(map.callback)
    return function() return keys end
  end
  local rhs = (map.rhs or ''):gsub('<SID>', ('<SNR>%d_'):format(map.sid or 0))
  if map.expr == 1 then
    return function() return vim.fn.eval(rhs) end
  end
  local keys = termcodes(rhs)
  return function() return keys end
end

--- Maps `lhs` to `action` while a suggestion shows, and to what it did before otherwise;
--- `takes_free_key_only`: leave a key that is already mapped alone.
local function map(lhs, action, takes_free_key_only)
  local before = global_mapping(lhs)
  if before and (before.desc or ''):sub(1, #DESC_PREFIX) == DESC_PREFIX then
    before = M.previous[termcodes(lhs)] -- setup() ran again: keep what the key did first
  elseif before and takes_free_key_only then
    return
  end
  M.previous[termcodes(lhs)] = before
  local otherwise = fallback(lhs, before)
  local act = call_keys(action[1])
  -- A mapping that was itself remapped stays so; the key alone, or a noremap mapping, is
  -- not remapped (script: only script-local mappings would be).
  local remap = before ~= nil and before.noremap == 0 and before.script == 0
  vim.api.nvim_set_keymap('i', lhs, '', {
    expr = true,
    noremap = not remap and before == nil,
    script = not remap and before ~= nil,
    silent = before ~= nil and before.silent == 1,
    desc = DESC_PREFIX .. action[2],
    callback = function()
      if ghost().visible() then
        return act
      end
      return otherwise()
    end,
  })
end

--- What each key did before the plugin mapped it (nvim_get_keymap's record, false if none).
M.previous = {}

--- Maps the configured keys (see lsp-coder.config `keymaps`); a key set to false is left
--- alone. Runs at VimEnter when called earlier, so mappings made later in the user's config
--- are found and kept as what the key does without a suggestion.
function M.map_keys(keymaps)
  local function apply()
    for name, action in pairs(ACTIONS) do
      if keymaps[name] then
        map(keymaps[name], action, false)
      end
    end
    if keymaps.suggest then
      map(keymaps.suggest, SUGGEST, true)
    end
  end
  if vim.v.vim_did_enter == 1 then
    apply()
  else
    vim.api.nvim_create_autocmd('VimEnter', { once = true, callback = apply })
  end
end

return M
