-- :checkhealth lsp_agent with the installed `lsp-agent` script, with the module form the
-- tests use, and with a missing binary (which must be reported as an error).
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local function checkhealth()
  vim.cmd('checkhealth lsp_agent')
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd('bwipeout!')
  return lines, table.concat(lines, '\n')
end

local function errors(lines)
  local out = {}
  for _, line in ipairs(lines) do
    if line:find('ERROR', 1, true) then
      table.insert(out, line)
    end
  end
  return out
end

local script = vim.env.LSP_AGENT_TEST_SCRIPT

H.test('the installed lsp-agent script passes', function()
  H.ok(script and vim.fn.executable(script) == 1, 'no lsp-agent script: ' .. tostring(script))
  E.setup({ cmd = { script, 'serve' }, model = 'claude-test-model' })
  local lines, text = checkhealth()
  H.eq(errors(lines), {}, text)
  H.ok(text:find('server command: ' .. script, 1, true), text)
  H.ok(text:find('version: lsp%-agent %d+%.%d+'), text)
  H.ok(text:find('model: claude-test-model (setup option)', 1, true), text)
  H.ok(text:find('an API key is set', 1, true), text)
  H.ok(text:find('setup() has been called', 1, true), text)
end)

H.test('the module form passes and lists the running server', function()
  E.setup()
  E.open('main.py')
  local lines, text = checkhealth()
  H.eq(errors(lines), {}, text)
  H.ok(text:find('version: lsp-agent', 1, true), text)
  local running = 'lsp%-agent %S+ for ' .. vim.pesc(E.root)
    .. ' %(trusted: true, encoding: utf%-8%)'
  H.ok(text:find(running), text)
end)

H.test('an offline server needs no key', function()
  E.setup({ cmd = { script, 'serve', '--offline' }, cmd_env = { ANTHROPIC_API_KEY = '' } })
  local lines, text = checkhealth()
  H.eq(errors(lines), {}, text)
  H.ok(text:find('offline: the server plays its bundled trial model', 1, true), text)
  H.ok(not text:find('ANTHROPIC_API_KEY is not set', 1, true), text)
end)

H.test('a missing server binary is an error', function()
  E.stop_all()
  E.setup({ cmd = { 'lsp-agent-does-not-exist', 'serve' } })
  local lines, text = checkhealth()
  H.eq(#errors(lines), 1, text)
  H.ok(text:find('server command not found: lsp-agent-does-not-exist', 1, true), text)
  -- The advice names the documented install command (the package is not on an index yet).
  H.ok(text:find('pipx install ./lsp-agent', 1, true), text)
end)

E.finish()
