-- lsp-coder: the :LspCoder command. Nothing starts until require('lsp-coder').setup{} runs.
if vim.g.loaded_lsp_coder then
  return
end
vim.g.loaded_lsp_coder = true

vim.api.nvim_create_user_command('LspCoder', function(args)
  require('lsp-coder.commands').run(args.fargs[1])
end, {
  nargs = '?',
  desc = 'lsp-coder: toggle | status | stats',
  complete = function()
    return require('lsp-coder.commands').names()
  end,
})
