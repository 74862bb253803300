-- :AgentCancel mid-stream and while a permission prompt is open; the session stays usable.
-- Scenario: tests/clients/neovim/test_integration.py::test_cancel.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local agent = E.setup()
local bufnr, client = E.open('notes.py')

local s
H.test('cancel while the answer streams', function()
  vim.cmd('AgentChat first prompt')
  s = E.session(client)
  H.wait(E.WAIT, function()
    return E.transcript_has(client, 'Thinking about it')
  end, 'the first chunk')
  H.ok(s.running, 'the turn runs')
  H.ok(agent.status(bufnr):find('running', 1, true), 'status says running: ' .. agent.status(bufnr))
  vim.cmd('AgentCancel')
  H.ok(s.cancel_requested)
  E.wait_idle(s)
  H.eq(s.last_stop, 'cancelled')
  H.ok(E.transcript_has(client, '-- turn ended: cancelled'))
  H.ok(not agent.status(bufnr):find('running', 1, true), 'status: ' .. agent.status(bufnr))
end)

H.test('cancel while a permission prompt is open withdraws it', function()
  s.last_stop = nil
  vim.cmd('AgentChat second prompt')
  local p = E.permission()
  H.ok(p.ui and vim.api.nvim_win_is_valid(p.ui.win), 'review window open')
  local win = p.ui.win
  vim.cmd('AgentCancel')
  E.wait_idle(s)
  H.eq(s.last_stop, 'cancelled')
  H.wait(E.WAIT, function()
    return #require('lsp_agent.permission').list() == 0
  end, 'the prompt to be dropped')
  H.ok(not vim.api.nvim_win_is_valid(win), 'the review window closed')
  H.eq(p.result, { outcome = { outcome = 'cancelled' } })
  H.eq(E.lines(bufnr), { 'x = 1' }, 'nothing was edited')
end)

H.test('the next prompt in the same session works', function()
  s.last_stop = nil
  vim.cmd('AgentChat third prompt')
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, 'Fresh start.'))
  H.eq(s.tokens.input > 0, true, 'usage was counted')
end)

H.test(':AgentCancel with nothing running only informs', function()
  local messages = {}
  local notify = vim.notify
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  vim.cmd('AgentCancel')
  vim.notify = notify
  H.eq(messages, { 'lsp-agent: no turn is running' })
end)

H.test(':AgentClose releases the session: the server no longer holds it, the chat is empty', function()
  local listed
  vim.cmd('AgentClose')
  H.wait(E.WAIT, function()
    return require('lsp_agent.session').current(client.id) == nil
  end, 'the session to be closed')
  H.eq(require('lsp_agent.session').get(s.id), nil)
  require('lsp_agent.session').list(client, function(list)
    listed = list
  end)
  H.wait(E.WAIT, function()
    return listed ~= nil
  end, 'the session list')
  for _, item in ipairs(listed) do
    -- A closed session may still be listed as saved (its transcript), never as live.
    H.ok(not (item.sessionId == s.id and item.live ~= false), 'still live: ' .. vim.inspect(item))
  end
  H.ok(not E.transcript_has(client, 'Fresh start.'), 'the chat was cleared')
end)

E.finish()
