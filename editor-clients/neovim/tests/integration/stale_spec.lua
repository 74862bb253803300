-- The user types on the line a pending edit changes: the review says the proposal is stale
-- before the user answers; allowed anyway, it is not applied (the server's merge refuses it,
-- and the plugin checks the version of workspace/applyEdit); the user's text stays.
-- Scenario: tests/clients/neovim/test_integration.py::test_stale_edit_is_refused.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local bufnr, client = E.open('conf.py')

H.test('a stale edit is refused and the typed text survives', function()
  vim.cmd('AgentChat bump the value')
  local s = E.session(client)
  local p = E.permission()
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, { 'value = 100  # typed meanwhile' })
  -- The review says it is stale before the user answers (the server's proposal update).
  H.wait(E.WAIT, function()
    return p:is_stale()
  end, 'the stale notice')
  local review = table.concat(require('lsp_agent.review').build(p), '\n')
  H.ok(review:find('⚠ Stale: you changed line 1 of conf.py', 1, true), review)
  p:answer('allow_once')
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.eq(E.lines(bufnr), { 'value = 100  # typed meanwhile' })
  H.ok(E.transcript_has(client, '— failed'), table.concat(E.transcript(client), '\n'))
end)

H.test('the plugin refuses a versioned edit for another buffer version', function()
  local workspace = require('lsp_agent.workspace')
  local version = vim.lsp.util.buf_versions[bufnr]
  local result = workspace.apply_edit(nil, {
    edit = { documentChanges = { {
      textDocument = { uri = vim.uri_from_bufnr(bufnr), version = version - 1 },
      edits = { { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0,
        character = 5 } }, newText = 'clobbered' } },
    } } },
  }, { client_id = client.id, method = 'workspace/applyEdit' })
  H.eq(result.applied, false)
  H.ok(result.failureReason:find('the edit was made for version ' .. (version - 1), 1, true),
    result.failureReason)
  H.eq(E.lines(bufnr), { 'value = 100  # typed meanwhile' })
end)

H.test('a versioned edit for the current version is applied and verified', function()
  local workspace = require('lsp_agent.workspace')
  local version = vim.lsp.util.buf_versions[bufnr]
  local result = workspace.apply_edit(nil, {
    edit = { documentChanges = { {
      textDocument = { uri = vim.uri_from_bufnr(bufnr), version = version },
      edits = { { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0,
        character = 5 } }, newText = 'amount' } },
    } } },
  }, { client_id = client.id, method = 'workspace/applyEdit' })
  H.eq(result.applied, true, vim.inspect(result))
  H.eq(E.lines(bufnr), { 'amount = 100  # typed meanwhile' })
  H.ok(vim.lsp.util.buf_versions[bufnr] > version)
end)

E.finish()
