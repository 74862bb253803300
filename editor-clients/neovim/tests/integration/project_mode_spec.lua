-- A repository's bypassPermissions default mode is not applied on trust alone: the session
-- starts in default, the first prompt asks for a confirmation naming the settings file, and
-- declining keeps default (the next tool call still asks).
-- Scenario: tests/clients/neovim/test_project_mode.py.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local _, client = E.open('notes.py')
local session = require('lsp_agent.session')

H.test('the confirmation names the file; declining keeps default', function()
  vim.cmd('AgentChat touch the file')
  local s = E.session(client)
  H.eq(session.mode(s), 'default')
  local p = E.permission()
  H.ok(p:title():find(E.path('.claude/settings.json'), 1, true), p:title())
  H.ok(p:title():find('bypassPermissions', 1, true), p:title())
  H.ok(p:option('reject_once'), 'a way to keep the default mode')
  p:answer('reject_once')
  p = E.permission()
  H.eq(p.tool_call.rawInput.command, 'touch made.txt')
  p:answer('reject_once')
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.eq(session.mode(s), 'default')
  H.eq(vim.fn.filereadable(E.path('made.txt')), 0)
end)

E.finish()
