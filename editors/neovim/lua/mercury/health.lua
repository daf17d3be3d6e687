-- :checkhealth mercury
local M = {}

function M.check()
  local health = vim.health
  local mercury = require('mercury')
  health.start('mercury-lsp')
  local version = tostring(vim.version())
  if require('mercury.ghost').core then
    health.ok('Neovim ' .. version .. ' (>= 0.12: ghost text through vim.lsp.inline_completion)')
  elseif vim.fn.has(mercury.MIN_VERSION) == 1 then
    health.ok('Neovim ' .. version .. ' (0.11: ghost text drawn by the plugin)')
  else
    health.error('Neovim >= 0.11 is required (vim.lsp.config)', { 'Upgrade Neovim (0.12 draws ghost text itself)' })
  end
  local cmd = mercury.config.cmd
  local exe = type(cmd) == 'table' and cmd[1] or nil
  if not exe then
    health.info('server command is a function: not checked')
  elseif vim.fn.executable(exe) == 1 then
    health.ok('server found: ' .. vim.fn.exepath(exe))
  else
    health.error('server not found: ' .. exe, { 'Install mercury-lsp (docs/install.md: pipx install ...) and put it on PATH, or set cmd in setup()' })
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
  if (require('mercury.ghost').core and vim.lsp.inline_completion.is_enabled())
      or (not require('mercury.ghost').core and mercury.enabled) then
    health.ok('ghost text enabled')
  else
    health.warn('ghost text disabled (setup({ ghost_text = true }))')
  end
end

return M
