-- mercury-lsp commands (the client starts with require('mercury').setup()).
if vim.g.loaded_mercury then return end
vim.g.loaded_mercury = true

local function cmd(name, fn, desc)
  vim.api.nvim_create_user_command(name, fn, { desc = desc })
end
cmd('MercuryNextEdit', function() require('mercury.next_edit').request(0) end, 'mercury: predict the next edit')
cmd('MercuryNextEditAccept', function() require('mercury.next_edit').jump_or_accept(0) end,
  'mercury: jump to / accept the next predicted edit')
cmd('MercuryNextEditDismiss', function() require('mercury.next_edit').dismiss(0) end, 'mercury: dismiss predicted edits')
cmd('MercuryToggle', function() require('mercury').toggle() end, 'mercury: stop / start the server and ghost text')
cmd('MercuryLog', function() vim.cmd.edit(vim.lsp.log.get_filename()) end, 'mercury: open the LSP log')
