-- The notice for prompts queued behind a running turn fits the command line: a wrapped
-- message stops Neovim at "Press ENTER".
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local agent = require('lsp_agent')

H.test('the longest wording that fits, the count always shown', function()
  H.eq(agent.queued_notice(2, 200), 'lsp-agent: a turn is running; your prompt is queued (2) and '
    .. 'is sent when it ends (:AgentCancel stops the turn and keeps it unsent)')
  H.eq(agent.queued_notice(2, 80),
    'lsp-agent: prompt queued (2): sent when the turn ends (:AgentCancel keeps it)')
  H.eq(agent.queued_notice(3, 60), 'lsp-agent: prompt queued (3)')
  H.eq(agent.queued_notice(3, 10), 'lsp-agent: prompt queued (3)')
end)

H.finish()
