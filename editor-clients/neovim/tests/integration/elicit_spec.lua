-- An MCP server's form with several fields and free text (the SDK fixture's `profile` tool,
-- from setup{mcp_servers}): the plugin asks field by field with vim.ui.select / vim.ui.input
-- (stubbed here, as a user's UI plugin would provide them); an answer the server finds wrong
-- is asked again with its problems; the second form is declined.
-- Scenario: tests/clients/neovim/test_integration_mcp.py::test_elicitation_form.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local WAIT_MCP = 60000 -- ms; an MCP server's start under load (never a timing assertion)

local fixture = vim.json.decode((assert(vim.env.LSP_AGENT_TEST_MCP, 'LSP_AGENT_TEST_MCP is not set')))
local agent = E.setup({ mcp_servers = { ed = fixture } })
local mcp = require('lsp_agent.mcp')

-- The user's answers, in the order the plugin asks: prompts seen are recorded.
local prompts = {}
local answers = {
  -- first form (in the server's field order: name, age, colour, subscribe): name "A" (too
  -- short), age "-1" (below the minimum)
  'Fill in', 'A', '-1', 'blue', 'Yes',
  -- asked again with the problems: fill in properly
  'Fill in', 'Ada', '36', 'blue', 'Yes',
  -- second form: decline
  'Decline',
}
vim.ui.select = function(items, opts, on_choice)
  table.insert(prompts, opts.prompt)
  local want = table.remove(answers, 1)
  for i, item in ipairs(items) do
    if item == want then
      return on_choice(item, i)
    end
  end
  error(('no item %s in %s'):format(tostring(want), vim.inspect(items)))
end
vim.ui.input = function(opts, on_confirm)
  table.insert(prompts, opts.prompt)
  -- answered later, from the event loop, as a real input UI does
  local value = table.remove(answers, 1)
  vim.defer_fn(function()
    on_confirm(value)
  end, 1)
end

H.test('a form is asked field by field, checked, and declined', function()
  local _, client = E.open('main.py')
  H.wait(WAIT_MCP, function()
    local state
    mcp.list(client, function(result)
      for _, server in ipairs(result and result.servers or {}) do
        if server.name == 'ed' then
          state = server.state
        end
      end
      state = state or 'none'
    end)
    vim.wait(E.WAIT, function()
      return state ~= nil
    end, 10)
    return state == 'ready'
  end, 'the ed server to be ready')
  agent.chat({ prompt = 'make my profile twice' })
  E.permission():answer('allow_once')
  H.wait(E.WAIT, function()
    return #answers == 1
  end, 'the first form to be filled twice')
  E.permission():answer('allow_once')
  local s = E.session(client)
  E.wait_idle(s)
  H.eq(s.last_stop, 'end_turn')
  H.eq(#answers, 0, 'every answer was asked for')
  H.eq(prompts[1], 'MCP server ed asks: Create your profile')
  H.eq(prompts[2], 'Name * (Your name): ')
  H.eq(prompts[3], 'Age *: ')
  H.eq(prompts[4], 'Colour')
  H.eq(prompts[5], 'Subscribe')
  H.eq(prompts[6], 'MCP server ed asks: Create your profile\n'
    .. '(name: at least 2 characters; age: at least 0)')
end)

E.finish()
