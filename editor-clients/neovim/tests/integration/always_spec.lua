-- "Always allow" in the project scope: the prompt shows who asked, the rule it remembers and
-- where; the answer carries the scope; the server writes the rule to the project's
-- .claude/settings.local.json, and the same command later in the turn runs without asking.
-- Scenario: tests/clients/neovim/test_integration.py::test_always_allow_in_project.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

E.setup()
local _, client = E.open('notes.py')

local asked = {}
vim.api.nvim_create_autocmd('User', {
  pattern = 'LspAgentPermission',
  callback = function(args)
    table.insert(asked, args.data.title)
  end,
})

local s
H.test('the prompt shows the rule "always" remembers and the scopes; s then A answers', function()
  H.eq(vim.fn.filereadable(E.path('.claude/settings.local.json')), 0)
  vim.cmd('AgentChat create made.txt twice')
  s = E.session(client)
  local p = E.permission()
  H.eq(p.tool_call.rawInput.command, 'touch made.txt')
  H.eq(p.suggested_rules, { 'Bash(touch made.txt)' })
  H.eq(p.scopes, { 'session', 'project', 'user' })
  H.eq(p.source, 'default')
  H.ok(p:option('allow_always'), 'allow_always is offered')
  H.ok(p.ui and vim.api.nvim_win_is_valid(p.ui.win), 'the review window is open')
  local text = table.concat(vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false), '\n')
  H.ok(text:find('Asked by the default policy', 1, true), text)
  H.ok(text:find('  rule:  Bash(touch made.txt)', 1, true), text)
  H.ok(text:find('  keep in: [session] project user', 1, true), text)
  vim.api.nvim_set_current_win(p.ui.win)
  vim.api.nvim_feedkeys('s', 'x', false)
  text = table.concat(vim.api.nvim_buf_get_lines(p.ui.buf, 0, -1, false), '\n')
  H.ok(text:find('saved to .claude/settings.local.json in this project', 1, true), text)
  vim.api.nvim_feedkeys('A', 'x', false)
  H.eq(p.result, { outcome = { outcome = 'selected', optionId = 'allow_always',
    scope = 'project' } })
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
end)

H.test('asked once: the second, identical command ran under the remembered rule', function()
  H.eq(asked, { 'touch made.txt' })
  H.eq(#require('lsp_agent.permission').list(), 0)
  H.ok(E.transcript_has(client, 'Touched it twice.'))
  H.eq(vim.fn.filereadable(E.path('made.txt')), 1)
end)

H.test('the rule was saved to .claude/settings.local.json', function()
  local saved = vim.json.decode(E.read('.claude/settings.local.json'))
  H.eq(saved, { permissions = { allow = { 'Bash(touch made.txt)' } } })
end)

E.finish()
