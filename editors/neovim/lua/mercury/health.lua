-- :checkhealth mercury
local M = {}

function M.check()
  local health = vim.health
  local mercury = require('mercury')
  health.start('mercury-lsp')
  if vim.fn.has('nvim-0.12') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()) .. ' (>= 0.12: LSP inline completion)')
  else
    health.error('Neovim >= 0.12 is required (vim.lsp.inline_completion)')
  end
  local cmd = mercury.config.cmd
  local exe = type(cmd) == 'table' and cmd[1] or nil
  if not exe then
    health.info('server command is a function: not checked')
  elseif vim.fn.executable(exe) == 1 then
    health.ok('server found: ' .. vim.fn.exepath(exe))
  else
    health.error('server not found: ' .. exe, { 'Install mercury-lsp (./dev setup) and put .venv/bin on PATH, or set cmd in setup()' })
  end
  local client = mercury.client(0) or vim.lsp.get_clients({ name = 'mercury' })[1]
  if not client then
    health.warn('mercury-lsp is not running (open a file of a configured filetype: '
      .. table.concat(mercury.config.filetypes, ', ') .. ')')
  elseif mercury.state == 'ready' then
    health.ok('model ready (client ' .. client.id .. ', ' .. client.offset_encoding .. ')')
  elseif mercury.state == 'error' then
    health.error('model failed to load: ' .. mercury.message)
  else
    health.warn('model not ready yet: ' .. mercury.state)
  end
  if vim.lsp.inline_completion.is_enabled() then
    health.ok('ghost text enabled')
  else
    health.warn('ghost text disabled (setup({ ghost_text = true }))')
  end
end

return M
