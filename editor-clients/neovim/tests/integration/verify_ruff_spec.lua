-- Verification in the stock set-up: ruff attached the normal way (vim.lsp.config +
-- vim.lsp.enable, pull diagnostics), and an agent edit that leaves ruff's diagnostics as they
-- were, applied while the chat and review windows have the focus. The verdict is known (not
-- "unknown" after the server's wait), and the chat shows it as one line, once.
-- Scenario: tests/clients/neovim/test_integration.py::test_verify_with_ruff.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

vim.lsp.config('ruff', {
  cmd = { vim.env.LSP_AGENT_TEST_RUFF, 'server' },
  filetypes = { 'python' },
  root_markers = { '.git' },
})
vim.lsp.enable('ruff')
E.setup()
local bufnr, client = E.open('calc.py')

H.test('ruff reports the unused import through pull diagnostics', function()
  H.wait(E.WAIT, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 'ruff diagnostics')
  local ruff = vim.lsp.get_clients({ name = 'ruff', bufnr = bufnr })[1]
  H.ok(ruff and ruff.server_capabilities.diagnosticProvider, 'ruff offers pull diagnostics')
end)

--- The session's tool entries whose id starts with `verify_`.
local function verify_entries(s)
  local found = {}
  for _, entry in ipairs(s.transcript.entries) do
    if entry.kind == 'tool' and tostring(entry.id):find('^verify_') then
      table.insert(found, entry)
    end
  end
  return found
end

H.test('an edit that changes no diagnostic gets a known verdict, shown once', function()
  vim.cmd('AgentChat fix average')
  local s = E.session(client)
  local p = E.permission()
  H.ok(vim.api.nvim_get_current_buf() ~= bufnr, 'another window has the focus')
  p:answer('allow_once')
  E.wait_idle(s)
  H.eq(E.lines(bufnr)[10], '    return total / len(values)', 'the edit reached the buffer')
  local entries = verify_entries(s)
  H.eq(#entries, 1, 'one verification card')
  H.eq(entries[1].title, 'Diagnostics: no new problems in calc.py')
  local count, lines = 0, E.transcript(client)
  for _, line in ipairs(lines) do
    H.ok(not line:find('diagnostics-after-edit', 1, true), 'model text in the chat: ' .. line)
    H.ok(not line:find('unknown', 1, true), 'an unknown verdict: ' .. line)
    if line:find('Diagnostics:', 1, true) then
      count = count + 1
    end
  end
  H.eq(count, 1, table.concat(lines, '\n'))
end)

E.finish()
