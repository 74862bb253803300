-- Workspace trust: asked once per root, stored in stdpath("data"); an untrusted root's server
-- starts with trusted = false; :AgentTrust trusts it and restarts the server.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local questions = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(questions, { items = items, prompt = opts.prompt })
  on_choice(items[2], 2) -- "Do not trust"
end

E.setup({ trust = { default = 'ask' } })
local trust_file = vim.fn.stdpath('data') .. '/lsp_agent/trust.json'

H.test('the first file of a root asks; the answer is stored', function()
  local _, client = E.open('a.py')
  H.eq(#questions, 1)
  H.ok(questions[1].prompt:find(E.root, 1, true), questions[1].prompt)
  H.eq(client.config.init_options.lspAgent.trusted, false)
  H.eq(require('lsp_agent.trust').file(), trust_file)
  local decisions = vim.json.decode(table.concat(vim.fn.readfile(trust_file), '\n'))
  H.eq(decisions, { [E.root] = false })
end)

H.test('other files of the root are not asked about again', function()
  local _, client = E.open('b.py')
  H.eq(#questions, 1)
  H.eq(client.config.init_options.lspAgent.trusted, false)
  H.eq(#vim.lsp.get_clients({ name = 'lsp_agent' }), 1, 'one client per root')
end)

H.test(':AgentTrust trusts the root and restarts its server as trusted', function()
  local old = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
  vim.cmd('AgentTrust')
  local new
  H.wait(E.WAIT, function()
    new = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
    return new and new.id ~= old.id and new.initialized
  end, 'the restarted server')
  H.eq(new.config.init_options.lspAgent.trusted, true)
  H.ok(vim.lsp.buf_is_attached(vim.fn.bufnr(E.path('a.py')), new.id), 'a.py re-attached')
  H.ok(vim.lsp.buf_is_attached(vim.fn.bufnr(E.path('b.py')), new.id), 'b.py re-attached')
  local decisions = vim.json.decode(table.concat(vim.fn.readfile(trust_file), '\n'))
  H.eq(decisions, { [E.root] = true })
  H.eq(#questions, 1)
end)

H.test('a corrupt trust file is ignored (and asked again), not fatal', function()
  vim.fn.writefile({ '{not json' }, trust_file)
  H.eq(require('lsp_agent.trust').read(), {})
end)

E.finish()
