-- :AgentAsk sends the selection's *buffer* text; :AgentFix with a server that offers no code
-- actions (an older one) sends the diagnostics at the cursor with the buffer; :AgentMode and
-- :AgentSessions. The server's "Fix with agent" action itself: fix_action_spec.lua.
-- Scenario: tests/clients/neovim/test_integration.py::test_ask_fix (each step expects the
-- unsaved marker or the diagnostic message in the request the model receives).
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local agent = E.setup()
local bufnr, client = E.open('shop.py')

local s
H.test(':AgentAsk on a linewise range sends unsaved buffer text', function()
  vim.api.nvim_buf_set_lines(bufnr, 1, 2, false, { '    return price * 0.9  # UNSAVED_MARKER' })
  vim.cmd('1,2AgentAsk why the discount?')
  s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, '`@shop.py:1-2`'), table.concat(E.transcript(client), '\n'))
  H.ok(E.transcript_has(client, 'It applies a discount.'))
end)

H.test(':AgentAsk on a characterwise visual selection', function()
  s.last_stop = nil
  vim.api.nvim_set_current_win(vim.fn.bufwinid(bufnr))
  -- Select "price * 0.9" on line 2 (charwise) and leave visual mode.
  vim.api.nvim_win_set_cursor(0, { 2, 11 })
  vim.cmd('normal! v10l\27')
  vim.cmd("'<,'>AgentAsk what is this expression?")
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
end)

H.test(':AgentFix without a server code action sends the diagnostics and the buffer', function()
  s.last_stop = nil
  vim.api.nvim_set_current_win(vim.fn.bufwinid(bufnr))
  local ns = vim.api.nvim_create_namespace('fake_checker')
  vim.diagnostic.set(ns, bufnr, {
    { lnum = 3, col = 4, end_col = 10, message = 'undefined name tax_rate', severity = 1,
      source = 'fakecheck' },
  })
  vim.api.nvim_win_set_cursor(0, { 4, 6 })
  -- Play a server without code actions (the real one offers "Fix with agent").
  local provider = client.server_capabilities.codeActionProvider
  client.server_capabilities.codeActionProvider = nil
  local how
  local ok, err = pcall(agent.fix, { on_done = function(h)
    how = h
  end })
  client.server_capabilities.codeActionProvider = provider
  H.ok(ok, err)
  E.wait_idle(s)
  H.eq(how, 'prompt')
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, 'Fix these diagnostics in shop.py:'))
end)

H.test(':AgentMode sets the mode; the statusline shows it', function()
  vim.cmd('AgentMode plan')
  H.wait(E.WAIT, function()
    return s.modes and s.modes.currentModeId == 'plan'
  end, 'the mode change')
  H.ok(agent.status(bufnr):find('agent plan', 1, true), agent.status(bufnr))
  H.eq(vim.fn.getcompletion('AgentMode ', 'cmdline'),
    { 'default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk' })
end)

H.test(':AgentSessions lists the server\'s sessions', function()
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(function(item)
      return opts.format_item(item)
    end, items)
    on_choice(items[1], 1)
  end
  vim.cmd('AgentSessions')
  H.wait(E.WAIT, function()
    return offered ~= nil
  end, 'the session list')
  H.eq(#offered, 1)
  H.ok(offered[1]:find(s.id, 1, true), offered[1])
  H.eq(require('lsp_agent.session').current(client.id), s, 'resuming the current one keeps it')
end)

H.test(':AgentSessions on a session the server does not know: the load fails, a message says why', function()
  H.eq(client.server_capabilities.experimental.lspAgent.loadSession, true, 'the server resumes sessions')
  local compat = require('lsp_agent.compat')
  local request, notify = compat.request, vim.notify
  local sent, messages = {}, {}
  compat.request = function(c, method, ...)
    table.insert(sent, method)
    return request(c, method, ...)
  end
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  vim.ui.select = function(_, _, on_choice)
    on_choice({ sessionId = 'from-another-editor', cwd = vim.fn.getcwd(), busy = false }, 1)
  end
  local ok, err = pcall(function()
    vim.cmd('AgentSessions')
    H.wait(E.WAIT, function()
      return #messages > 0
    end, 'the message')
  end)
  compat.request, vim.notify = request, notify
  assert(ok, err)
  H.eq(sent, { 'lspAgent/session/list', 'lspAgent/session/load' })
  H.ok(messages[1]:find("no saved session with id 'from-another-editor'", 1, true), messages[1])
  H.eq(require('lsp_agent.session').current(client.id), s, 'the current session is kept')
end)

E.finish()
