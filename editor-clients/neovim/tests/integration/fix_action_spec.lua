-- The server's "Fix with agent" code action end to end: the diagnostics bridge delivers a
-- vim.diagnostic namespace to the server; :AgentFix runs the action (workspace/executeCommand),
-- the plugin adopts the session from lspAgent/session/didStart, streams it into the chat, the
-- edit is accepted in the review window, and lspAgent/session/didEnd ends the turn. Then the
-- same action from vim.lsp.buf.code_action(), and :AgentFix again in the now current session.
-- Scenario: tests/clients/neovim/test_integration.py::test_fix_action.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local agent = E.setup()
local session_mod = require('lsp_agent.session')
local bufnr, client = E.open('shop.py')
local ns = vim.api.nvim_create_namespace('fake_checker')

--- Titles of the server's code actions for `line` (0-based) with no diagnostics in the
--- request's context: what the server offers there comes from what it stored.
local function offered_titles(line)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = line, character = 0 }, ['end'] = { line = line, character = 0 } },
    context = { diagnostics = {} },
  }
  local response = client:request_sync('textDocument/codeAction', params, E.WAIT, bufnr)
  H.ok(response and not response.err, vim.inspect(response))
  return vim.tbl_map(function(action)
    return action.title
  end, response.result or {})
end

--- Wait until the server offers `title` on `line` (the bridge is debounced).
local function wait_offered(line, title)
  local titles
  for _ = 1, 200 do
    titles = offered_titles(line)
    if vim.tbl_contains(titles, title) then
      return titles
    end
    vim.wait(50)
  end
  error(('the server never offered %q on line %d; offered: %s'):format(title, line,
    vim.inspect(titles)))
end

local first
H.test('the bridge delivers another namespace\'s diagnostic to the server', function()
  H.eq(offered_titles(2), {}, 'nothing is offered before the diagnostic exists')
  vim.diagnostic.set(ns, bufnr, {
    { lnum = 2, col = 27, end_col = 35, message = 'undefined name tax_rate',
      severity = vim.diagnostic.severity.ERROR, source = 'fakecheck', code = 'F821' },
  })
  -- The request carries no diagnostics: these actions exist only because the server stored
  -- what lspAgent/diagnostics/didChange sent.
  H.eq(wait_offered(2, 'Fix with agent: undefined name tax_rate'),
    { 'Fix with agent: undefined name tax_rate', 'Explain with agent' })
end)

H.test(':AgentFix runs the code action; the session is adopted and the edit accepted', function()
  vim.api.nvim_set_current_win(vim.fn.bufwinid(bufnr))
  vim.api.nvim_win_set_cursor(0, { 3, 30 })
  H.eq(session_mod.current(client.id), nil, 'no chat session yet')
  local how, answered
  agent.fix({ on_done = function(h, session_id)
    how, answered = h, session_id
  end })
  first = E.session(client) -- adopted from lspAgent/session/didStart
  H.ok(first.running, 'the adopted session runs the server-started turn')
  local p = E.permission()
  H.eq(p.session_id, first.id)
  H.eq(p.tool_call.kind, 'edit')
  H.ok(require('lsp_agent.chat').is_open(client.id), 'the chat is open')
  p:answer('allow_once')
  E.wait_idle(first)
  H.eq(how, 'code_action')
  H.eq(answered, first.id)
  H.eq(first.last_stop, 'end_turn')
  H.eq(E.lines(bufnr), {
    'def total(prices, tax_rate=0.2):',
    '    subtotal = sum(prices)',
    '    return subtotal * (1 + tax_rate)',
  })
  H.eq(vim.bo[bufnr].modified, true, 'the edit went to the buffer, not the disk')
  H.ok(E.transcript_has(client, 'Fix with agent: shop.py:3 — undefined name tax_rate'),
    table.concat(E.transcript(client), '\n'))
  H.ok(E.transcript_has(client, 'Added a default tax rate.'))
  H.eq(#require('lsp_agent.permission').list(), 0)
end)

local second
H.test('the same action from vim.lsp.buf.code_action() starts a session the chat switches to',
  function()
    vim.diagnostic.set(ns, bufnr, {
      { lnum = 1, col = 4, end_col = 12, message = 'subtotal is never rounded',
        severity = vim.diagnostic.severity.WARN, source = 'fakecheck', code = 'W1' },
    })
    wait_offered(1, 'Fix with agent: subtotal is never rounded')
    vim.api.nvim_win_set_cursor(0, { 2, 6 })
    -- Neovim sends only the client's own diagnostics in the context: the server uses the
    -- bridged one, resolves the command and Neovim runs it with workspace/executeCommand.
    vim.lsp.buf.code_action({
      apply = true,
      filter = function(action)
        return action.title == 'Fix with agent: subtotal is never rounded'
      end,
    })
    H.wait(E.WAIT, function()
      second = session_mod.current(client.id)
      return second ~= nil and second ~= first
    end, 'the session started by the code action')
    E.wait_idle(second)
    H.eq(second.last_stop, 'end_turn')
    H.ok(E.transcript_has(client, 'The subtotal is fine as it is.'),
      table.concat(E.transcript(client), '\n'))
  end)

H.test(':AgentFix runs in the chat\'s current session when it is idle', function()
  vim.api.nvim_win_set_cursor(0, { 2, 6 })
  local answered
  agent.fix({ on_done = function(_, session_id)
    answered = session_id
  end })
  H.wait(E.WAIT, function()
    return answered ~= nil
  end, 'the command\'s answer')
  H.eq(answered, second.id)
  E.wait_idle(second)
  H.eq(session_mod.current(client.id), second)
  H.ok(E.transcript_has(client, 'Still fine.'))
end)

E.finish()
