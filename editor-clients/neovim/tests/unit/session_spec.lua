-- Session records: updates for sessions started elsewhere, turns the server starts itself
-- (didStart/didEnd), mode tracking, the status line.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
require('lsp_agent.config').set({})
local session = require('lsp_agent.session')

local CLIENT = 4242

H.test('updates for an unknown session create it and make it current', function()
  local started = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'LspAgentSessionStarted',
    callback = function(args)
      table.insert(started, args.data)
    end,
  })
  local changes = {}
  session.on_change(function(s, index)
    table.insert(changes, { s.id, index })
  end)
  session.handle_update(nil, {
    sessionId = 'elsewhere-1',
    update = {
      sessionUpdate = 'agent_message_chunk',
      content = { type = 'text', text = 'Fixing' },
    },
  }, { client_id = CLIENT })
  local s = session.current(CLIENT)
  H.eq(s.id, 'elsewhere-1')
  H.eq(started, { { session_id = 'elsewhere-1', client_id = CLIENT } })
  H.eq(changes[#changes], { 'elsewhere-1', 2 }, 'header + agent entry')
  H.eq(s.transcript.entries[2].lines, { 'Fixing' })
end)

H.test('a running current session is not replaced by another one', function()
  local current = session.current(CLIENT)
  current.running = true
  session.handle_update(nil, {
    sessionId = 'elsewhere-2',
    update = { sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = 'x' } },
  }, { client_id = CLIENT })
  H.eq(session.current(CLIENT).id, 'elsewhere-1')
  H.ok(session.get('elsewhere-2'), 'the other session is still recorded')
  current.running = false
end)

H.test('mode updates and the status line', function()
  local s = session.current(CLIENT)
  H.eq(session.status_line(s), 'agent default')
  session.handle_update(nil, { sessionId = s.id,
    update = { sessionUpdate = 'current_mode_update', currentModeId = 'acceptEdits' } },
    { client_id = CLIENT })
  H.eq(session.mode(s), 'acceptEdits')
  s.running = true
  s.tokens.input, s.tokens.output = 1200, 300
  H.eq(session.status_line(s), 'agent acceptEdits · running · 1.5k tok')
  session.handle_update(nil, { sessionId = s.id,
    update = { sessionUpdate = 'usage_update', used = 45678, size = 200000 } },
    { client_id = CLIENT })
  -- No word from the server for a while (the endpoint is being retried): the status says so.
  s.last_activity = vim.uv.now() - 12500
  H.eq(session.status_line(s), 'agent acceptEdits · waiting for the model 12s · 45.7k/200.0k')
  -- ... unless a tool runs (or waits for the user), which explains the silence.
  s.transcript:apply({ sessionUpdate = 'tool_call', toolCallId = 'slow', title = 'Bash: make',
    status = 'in_progress' })
  H.eq(session.status_line(s), 'agent acceptEdits · running · 45.7k/200.0k')
  s.cancel_requested = true
  H.eq(session.status_line(s), 'agent acceptEdits · cancelling · 45.7k/200.0k')
  s.running = false
end)

H.test('malformed updates are ignored', function()
  local before = #session.for_client(CLIENT)
  session.handle_update(nil, { update = {} }, { client_id = CLIENT })
  session.handle_update(nil, 'nonsense', { client_id = CLIENT })
  H.eq(#session.for_client(CLIENT), before)
end)

H.test('didStart adopts the session as current (even over a running one) and runs it', function()
  local events = {}
  local group = vim.api.nvim_create_augroup('session_spec_did', { clear = true })
  for _, pattern in ipairs({ 'LspAgentSessionStarted', 'LspAgentTurnEnd' }) do
    vim.api.nvim_create_autocmd('User', {
      group = group,
      pattern = pattern,
      callback = function(args)
        table.insert(events, { pattern, args.data })
      end,
    })
  end
  local busy = session.current(CLIENT)
  busy.running = true -- the user asked for the fix: the chat switches to it anyway
  session.handle_did_start(nil, { sessionId = 'fix-1', cwd = '/w', title = 'Fix with agent: a.py',
    origin = 'lspAgent.fixWithAgent' }, { client_id = CLIENT })
  busy.running = false
  local s = session.current(CLIENT)
  H.eq(s.id, 'fix-1')
  H.eq(s.running, true)
  H.eq(s.last_stop, nil)
  H.eq(s.transcript.entries[#s.transcript.entries].kind, 'user')
  H.eq(s.transcript.entries[#s.transcript.entries].lines, { 'Fix with agent: a.py' })
  H.eq(events, { { 'LspAgentSessionStarted', { session_id = 'fix-1', client_id = CLIENT,
    title = 'Fix with agent: a.py', origin = 'lspAgent.fixWithAgent' } } })
  H.eq(session.prompt(s, { { type = 'text', text = 'x' } }, { text = 'x' }), false,
    'no prompt while the server-started turn runs')

  session.handle_did_end(nil, { sessionId = 'fix-1', stopReason = 'end_turn' },
    { client_id = CLIENT })
  H.eq(s.running, false)
  H.eq(s.last_stop, 'end_turn')
  H.eq(events[2], { 'LspAgentTurnEnd', { session_id = 'fix-1', stop_reason = 'end_turn' } })
  local entries = #s.transcript.entries
  session.handle_did_end(nil, { sessionId = 'fix-1', stopReason = 'end_turn' },
    { client_id = CLIENT })
  H.eq(#events, 2, 'a second didEnd (no turn announced) is ignored')
  H.eq(#s.transcript.entries, entries)

  session.handle_did_start(nil, { sessionId = 'fix-1', title = 'Explain with agent: a.py' },
    { client_id = CLIENT })
  session.handle_did_end(nil, { sessionId = 'fix-1', stopReason = 'cancelled',
    error = 'model endpoint returned HTTP 500' }, { client_id = CLIENT })
  H.eq(s.last_stop, 'error')
  H.eq(s.transcript.entries[#s.transcript.entries].text, 'error: model endpoint returned HTTP 500')
  H.eq(events[#events], { 'LspAgentTurnEnd', { session_id = 'fix-1',
    error = 'model endpoint returned HTTP 500' } })
  vim.api.nvim_del_augroup_by_id(group)
end)

H.test('malformed didStart and didEnd are ignored', function()
  local before = #session.for_client(CLIENT)
  session.handle_did_start(nil, { title = 'no id' }, { client_id = CLIENT })
  session.handle_did_start(nil, 'nonsense', { client_id = CLIENT })
  session.handle_did_end(nil, { sessionId = 'never-started', stopReason = 'end_turn' },
    { client_id = CLIENT })
  session.handle_did_end(nil, nil, { client_id = CLIENT })
  H.eq(#session.for_client(CLIENT), before)
  H.eq(session.current(CLIENT).id, 'fix-1')
end)

H.test('a server exit ends running turns', function()
  local s = session.current(CLIENT)
  s.running = true
  session.client_exited(CLIENT, 1)
  H.eq(s.running, false)
  H.eq(session.current(CLIENT), nil)
  H.eq(s.transcript.entries[#s.transcript.entries].text, 'server exited (code 1)')
end)

H.test('token formatting', function()
  H.eq(session.format_tokens(950), '950')
  H.eq(session.format_tokens(12345), '12.3k')
  H.eq(session.format_tokens(2500000), '2.5M')
  H.eq(session.format_tokens(nil), '0')
end)

H.finish()
