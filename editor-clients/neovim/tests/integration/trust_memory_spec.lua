-- The project's CLAUDE.md reaches the model only while the root is trusted, and :AgentTrust /
-- :AgentUntrust change that in the running server from the next prompt (no restart).
-- Scenario and the model-side checks: tests/clients/neovim/test_integration_project.py::test_trust_memory.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

vim.ui.select = function(items, opts, on_choice)
  if opts.prompt and opts.prompt:find('trust the folder', 1, true) then
    return on_choice(items[3], 3) -- "Not now": untrusted, nothing stored
  end
  return on_choice(nil, nil)
end

E.setup({ trust = { default = 'ask' } })
local agent = require('lsp_agent')
local _, client = E.open('a.py')

local function say(text)
  local current = require('lsp_agent.session').current(client.id)
  if current then
    current.last_stop = nil -- wait for this prompt's end, not the last one's
  end
  agent.send_text(client.id, text)
  E.wait_idle(E.session(client))
end

H.test('untrusted: the first prompt goes without the project memory', function()
  H.eq(client.config.init_options.lspAgent.trusted, false)
  vim.cmd('AgentChat')
  say('first prompt, untrusted')
end)

H.test(':AgentTrust: the next prompt carries it, same server', function()
  vim.cmd('AgentTrust')
  H.eq(client.settings.lspAgent.trusted, true)
  say('second prompt, trusted')
  H.eq(vim.lsp.get_clients({ name = 'lsp_agent' })[1].id, client.id)
end)

H.test(':AgentUntrust: the next prompt goes without it again', function()
  vim.cmd('AgentUntrust')
  H.eq(client.settings.lspAgent.trusted, false)
  say('third prompt, untrusted again')
end)

E.finish()
