-- `lsp-agent serve --offline`: the plugin against the real server playing its bundled trial
-- model (no API key): a question about the open file, a two-hunk edit reviewed hunk by hunk,
-- a rejected command answered politely, an allowed command run.
-- Driven by tests/clients/neovim/test_integration.py::test_offline_trial.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local buf, client = E.open('calc.py')

H.test('a question about the open file is answered from the file', function()
  vim.cmd('AgentChat What does @calc.py do?')
  local s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, '`calc.py` has 14 lines.'), table.concat(E.transcript(client), '\n'))
  H.ok(E.transcript_has(client, '`add`'), 'names the definitions')
  H.ok(E.transcript_has(client, 'offline trial model'), 'says what it is')
end)

H.test('an edit is proposed as two hunks and lands in the buffer', function()
  vim.cmd('AgentChat edit @calc.py please')
  local p = E.permission()
  H.eq(#p.files[1].proposal.hunks, 2, 'two hunks')
  p:answer('allow_once')
  local s = E.session(client)
  E.wait_idle(s)
  local lines = E.lines(buf)
  H.eq(lines[1], "# Reviewed with lsp-agent's offline trial model.")
  H.eq(lines[12], '# (The trial model looked at the lines above.)')
  H.ok(E.transcript_has(client, 'Done: the edit of `calc.py` was applied'))
end)

H.test('a rejected command gets a polite answer and does not run', function()
  vim.cmd('AgentChat run `touch rejected.txt`')
  local p = E.permission()
  H.eq(p.tool_call.rawInput.command, 'touch rejected.txt')
  p:answer('reject_once')
  local s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.ok(E.transcript_has(client, "OK, I won't. The Bash call did not run"))
  H.eq(vim.uv.fs_stat(E.path('rejected.txt')), nil)
end)

H.test('an allowed command runs', function()
  vim.cmd('AgentChat run `touch made.txt`')
  local p = E.permission()
  p:answer('allow_once')
  local s = E.session(client)
  E.wait_idle(s)
  H.ok(E.transcript_has(client, '`touch made.txt` ran.'))
  H.ok(vim.uv.fs_stat(E.path('made.txt')) ~= nil)
end)

E.stop_all()
E.finish()
