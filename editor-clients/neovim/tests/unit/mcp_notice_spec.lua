-- Servers that newly need the user (an approval, a login) are announced in ONE notice of ONE
-- line that fits the command line: two notices at once, or one that wraps, stop Neovim at
-- "Press ENTER" in the middle of whatever the user was doing.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local mcp = require('lsp_agent.mcp')

local said = {}
vim.notify = function(msg, level)
  table.insert(said, { msg = msg, level = level })
end

local function server(name, state, description)
  return { name = name, state = state, scope = 'project', description = description or '' }
end

local function changed(client_id, servers)
  mcp.handle_did_change(nil, { cwd = '/p', servers = servers }, { client_id = client_id })
  vim.wait(50) -- let the scheduled notice run
end

H.test('two servers needing approval and one a login make one one-line notice', function()
  vim.o.columns = 160 -- room for the names (a narrow screen gets their number: below)
  said = {}
  changed(1, {
    server('fx', 'needs_approval', 'python fx.py'),
    server('gx', 'needs_approval', 'node gx.js'),
    server('web', 'needs_login', 'https://example.com/mcp'),
    server('ok', 'ready'),
  })
  H.eq(#said, 1, vim.inspect(said))
  local msg = said[1].msg
  H.ok(not msg:find('\n', 1, true), msg)
  H.ok(vim.fn.strdisplaywidth(msg) <= vim.v.echospace, ('%q is wider than %d columns'):format(
    msg, vim.v.echospace))
  for _, name in ipairs({ 'fx', 'gx', 'web' }) do
    H.ok(msg:find(name, 1, true), msg)
  end
  H.eq(said[1].level, vim.log.levels.WARN)
  -- The same servers in the next update: no second notice.
  changed(1, { server('fx', 'needs_approval'), server('gx', 'needs_approval') })
  H.eq(#said, 1, vim.inspect(said))
end)

H.test('one server: its name, what it runs and the command, shortened to fit', function()
  local fx = server('fx', 'needs_approval', 'python fx.py')
  H.eq(mcp.notice({ fx }, {}, 200),
    'lsp-agent: MCP server fx needs your approval (python fx.py): :AgentMcp approve fx')
  H.eq(mcp.notice({ fx }, {}, 70),
    'lsp-agent: MCP server fx needs your approval: :AgentMcp approve fx')
  H.eq(mcp.notice({ fx }, {}, 50), 'lsp-agent: MCP server fx: :AgentMcp approve fx')
  -- Narrower still: the shortest form, which names the server and the command, all the same.
  H.eq(mcp.notice({ fx }, {}, 20), 'lsp-agent: MCP server fx: :AgentMcp approve fx')
  local web = server('web', 'needs_login')
  H.eq(mcp.notice({}, { web }, 200),
    'lsp-agent: MCP server web asks you to log in: :AgentMcp login web')
  H.eq(mcp.notice({}, { web }, 50), 'lsp-agent: MCP server web: :AgentMcp login web')
  H.eq(mcp.notice({}, {}, 200), nil)
end)

H.test('many servers: their names, or their number when the names do not fit', function()
  local many = {}
  for i = 1, 12 do
    table.insert(many, server('server-number-' .. i, 'needs_approval'))
  end
  local wide = mcp.notice({ many[1], many[2] }, {}, 200)
  H.eq(wide, 'lsp-agent: MCP servers server-number-1, server-number-2 need your approval: '
    .. ':AgentMcp approve NAME')
  H.eq(mcp.notice(many, {}, 80),
    'lsp-agent: 12 MCP servers need your approval or a login: :AgentMcp')
end)

H.finish()
