-- Workspace trust: opening files never asks; the first use of the agent in a root does.
-- "Not now" is remembered for the Neovim session; "Trust" reaches the running server at once;
-- :AgentTrust / :AgentUntrust store the decision and tell the running server (no restart).
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local questions = {}
local answer = 3 -- "Not now"
vim.ui.select = function(items, opts, on_choice)
  if not opts.prompt:find('trust the folder', 1, true) then
    return on_choice(nil, nil) -- the session picker of :AgentSessions
  end
  table.insert(questions, { items = items, prompt = opts.prompt })
  on_choice(items[answer], answer)
end

E.setup({ trust = { default = 'ask' } })
local trust = require('lsp_agent.trust')
local trust_file = vim.fn.stdpath('data') .. '/lsp_agent/trust.json'

H.test('opening files of a new root asks nothing; the server starts untrusted', function()
  local _, client = E.open('a.py')
  E.open('b.py')
  H.eq(#questions, 0)
  H.eq(client.config.init_options.lspAgent.trusted, false)
  H.eq(#vim.lsp.get_clients({ name = 'lsp_agent' }), 1, 'one client per root')
  H.eq(vim.fn.filereadable(trust_file), 0, 'nothing stored')
end)

H.test('the first use of the agent asks; "Not now" is not asked again this session', function()
  vim.cmd('AgentSessions')
  H.wait(E.WAIT, function()
    return #questions == 1
  end, 'the trust question')
  H.ok(questions[1].prompt:find(E.root, 1, true), questions[1].prompt)
  H.eq(#questions[1].items, 3)
  vim.cmd('AgentSessions')
  vim.cmd('AgentMode default')
  vim.wait(300)
  H.eq(#questions, 1, 'not asked again')
  H.eq(vim.fn.filereadable(trust_file), 0, '"Not now" is not stored')
  H.eq(trust.needs_question(E.root), false)
end)

H.test('"Trust" is stored and the running server is told at once', function()
  trust.reset_postponed() -- as after a Neovim restart
  answer = 1
  local client = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
  vim.cmd('AgentSessions')
  H.wait(E.WAIT, function()
    return #questions == 2
  end, 'the trust question')
  H.eq(client.settings.lspAgent.trusted, true)
  H.eq(require('lsp_agent.server').info(client.id).trusted, true)
  local decisions = vim.json.decode(table.concat(vim.fn.readfile(trust_file), '\n'))
  H.eq(decisions, { [E.root] = true })
end)

H.test(':AgentUntrust distrusts the root; the running server is told at once', function()
  local client = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
  vim.cmd('AgentUntrust')
  H.eq(vim.lsp.get_clients({ name = 'lsp_agent' })[1].id, client.id, 'no restart')
  H.eq(client.settings.lspAgent.trusted, false)
  H.eq(require('lsp_agent.server').info(client.id).trusted, false)
  local decisions = vim.json.decode(table.concat(vim.fn.readfile(trust_file), '\n'))
  H.eq(decisions, { [E.root] = false })
  vim.cmd('AgentTrust')
  H.eq(client.settings.lspAgent.trusted, true)
  vim.cmd('AgentTrust!')
  H.eq(client.settings.lspAgent.trusted, false)
  H.eq(vim.json.decode(table.concat(vim.fn.readfile(trust_file), '\n')), { [E.root] = false })
  H.ok(vim.lsp.buf_is_attached(vim.fn.bufnr(E.path('a.py')), client.id), 'a.py still attached')
  H.eq(#questions, 2)
end)

H.test('a corrupt trust file is ignored (and asked again), not fatal', function()
  vim.fn.writefile({ '{not json' }, trust_file)
  H.eq(require('lsp_agent.trust').read(), {})
end)

E.finish()
