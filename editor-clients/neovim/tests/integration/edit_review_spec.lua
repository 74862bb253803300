-- Chat prompt → Edit proposal → per-hunk review (one hunk rejected, one accepted) → the
-- buffer holds exactly the accepted hunk, and the user's unsaved line survives. Then the
-- diagnostics bridge sends another source's diagnostics of that buffer to the server.
-- Scenario: tests/clients/neovim/test_integration.py::test_edit_review.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local agent = E.setup()
local bufnr, client = E.open('calc.py')

H.test('the server negotiated utf-8 and advertises lsp-agent', function()
  H.eq(client.offset_encoding, 'utf-8')
  local caps = client.server_capabilities.experimental.lspAgent
  H.eq(caps.protocolVersion, 1)
  H.eq(client.config.init_options.lspAgent.trusted, true)
end)

local s
H.test('an unsaved change, a chat prompt and a per-hunk review', function()
  -- The user adds a line and does not save.
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '# unsaved note' })
  H.ok(vim.bo[bufnr].modified)

  vim.cmd('AgentChat please fix both functions')
  s = E.session(client)
  local p = E.permission()
  H.eq(p:title():find('calc.py', 1, true) ~= nil, true, 'title names the file: ' .. p:title())
  H.eq(#p.files, 1)
  H.eq(#p.files[1].proposal.hunks, 2, 'two hunks')
  H.ok(p.ui and vim.api.nvim_win_is_valid(p.ui.win), 'the review window is open')
  H.ok(E.transcript_has(client, 'awaiting permission'), 'the chat shows the pending prompt')

  -- Reject the first hunk with the review keys, accept the second.
  vim.api.nvim_set_current_win(p.ui.win)
  local first = vim.api.nvim_win_get_cursor(0)[1]
  H.eq(p.ui.map[first], { file = 1, hunk = 1 }, 'cursor starts on hunk 1')
  vim.api.nvim_feedkeys('n', 'x', false)
  H.eq(p.files[1].proposal.hunks[1].accepted, false)
  H.eq(p.files[1].proposal.hunks[2].accepted, true)
  vim.api.nvim_feedkeys('a', 'x', false) -- allow once
  H.eq(#require('lsp_agent.permission').list(), 0, 'answered')

  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
end)

H.test('the buffer holds the accepted hunk only, above the unsaved line', function()
  H.eq(E.lines(bufnr), {
    '# unsaved note',
    'def add(a, b):',
    '    return a + b',
    '',
    '',
    'def sub(a, b):',
    '    """Subtract b from a."""',
    '    return a - b',
  })
  H.ok(vim.bo[bufnr].modified, 'still unsaved: the edit went to the buffer')
  H.eq(E.read('calc.py'), table.concat({
    'def add(a, b):',
    '    return a + b',
    '',
    '',
    'def sub(a, b):',
    '    return a - b',
    '',
  }, '\n'), 'the file on disk is untouched')
end)

H.test('the transcript streamed the answer and the tool calls', function()
  H.ok(E.transcript_has(client, 'please fix both functions'))
  H.ok(E.transcript_has(client, 'I will document the functions.'))
  H.ok(E.transcript_has(client, 'Done: one hunk applied.'))
  local lines = E.transcript(client)
  local completed_edit = false
  for _, line in ipairs(lines) do
    if line:find('calc.py', 1, true) and line:find('●', 1, true) then
      completed_edit = true
    end
  end
  H.ok(completed_edit, 'a completed tool line for calc.py:\n' .. table.concat(lines, '\n'))
  H.ok(agent.status(bufnr):find('agent default', 1, true), 'status: ' .. agent.status(bufnr))
end)

H.test('the diagnostics bridge sends other sources\' diagnostics with the version', function()
  local ns = vim.api.nvim_create_namespace('fake_linter')
  local diagnostics = require('lsp_agent.diagnostics')
  local sent = {}
  -- Observe the wire call without replacing it (the real notification still goes out).
  local rpc_notify = client.rpc.notify
  client.rpc.notify = function(method, params)
    if method == 'lspAgent/diagnostics/didChange' then
      table.insert(sent, params)
    end
    return rpc_notify(method, params)
  end
  local ok, err = pcall(function()
    vim.diagnostic.set(ns, bufnr, {
      { lnum = 1, col = 4, end_lnum = 1, end_col = 7, message = 'fake problem', severity = 1,
        source = 'fakelint', code = 'F1' },
    })
    H.wait(E.WAIT, function()
      return #sent > 0
    end, 'the didChange notification')
    local payload = sent[#sent]
    H.eq(payload.uri, vim.uri_from_bufnr(bufnr))
    H.eq(payload.version, vim.lsp.util.buf_versions[bufnr])
    H.eq(payload.diagnostics, { {
      range = { start = { line = 1, character = 4 }, ['end'] = { line = 1, character = 7 } },
      severity = 1,
      message = 'fake problem',
      source = 'fakelint',
      code = 'F1',
    } })
    -- The same diagnostics are not sent twice.
    local before = #sent
    diagnostics.flush(bufnr)
    H.eq(#sent, before)
    -- Clearing them sends the (now empty) list.
    vim.diagnostic.reset(ns, bufnr)
    H.wait(E.WAIT, function()
      return #sent > before
    end, 'the empty list')
    H.eq(sent[#sent].diagnostics, {})
  end)
  client.rpc.notify = rpc_notify
  assert(ok, err)
end)

E.finish()
