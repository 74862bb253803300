--- MCP servers of the lsp-agent server: their state (lspAgent/mcp/didChange, lspAgent/mcp/list),
--- approval of project servers and reconnecting (:AgentMcp, :checkhealth lsp_agent).
local compat = require('lsp_agent.compat')
local methods = require('lsp_agent.protocol').methods

local M = {}

--- Last known servers per client id: { cwd = string, servers = table[] }.
local known = {}

--- Servers that already showed a "needs approval" notice, per client id and name.
local noticed = {}

--- One line per server: "name  state  N tools  scope  (error)".
--- @param server table
--- @return string
function M.format(server)
  local parts = { server.name, server.state }
  if server.state == 'ready' then
    table.insert(parts, ('%d tool%s'):format(server.tools or 0, server.tools == 1 and '' or 's'))
  end
  table.insert(parts, server.scope)
  table.insert(parts, server.description)
  local line = table.concat(parts, '  ')
  if server.error and server.error ~= vim.NIL and server.error ~= '' then
    line = line .. '  — ' .. tostring(server.error):gsub('\n.*', ' …')
  end
  return line
end

local function remember(client_id, result)
  if type(result) ~= 'table' or type(result.servers) ~= 'table' then
    return
  end
  known[client_id] = { cwd = result.cwd, servers = result.servers }
  noticed[client_id] = noticed[client_id] or {}
  for _, server in ipairs(result.servers) do
    if server.state == 'needs_approval' and not noticed[client_id][server.name] then
      noticed[client_id][server.name] = true
      vim.schedule(function()
        vim.notify(('lsp-agent: MCP server %s needs your approval (%s). :AgentMcp approve %s')
          :format(server.name, server.description or '', server.name), vim.log.levels.WARN)
      end)
    end
  end
end

--- Handler of lspAgent/mcp/didChange.
---@param params lsp_agent.protocol.McpServersResult
function M.handle_did_change(_, params, ctx)
  remember(ctx.client_id, params)
end

--- The last known servers of a client (from didChange or list), or nil.
--- @param client_id integer
--- @return table|nil
function M.known(client_id)
  return known[client_id]
end

--- Ask the server for its list; `callback(result|nil, err|nil)`.
function M.list(client, callback)
  compat.request(client, methods.MCP_LIST, vim.empty_dict(), function(err, result)
    if err then
      return callback(nil, err.message or vim.inspect(err))
    end
    remember(client.id, result)
    callback(result)
  end)
end

--- Send approve/reconnect for `name`; `callback(result|nil, err|nil)`.
--- @param action 'approve'|'reject'|'reconnect'
function M.act(client, action, name, callback)
  local method, params
  if action == 'reconnect' then
    method, params = methods.MCP_RECONNECT, { name = name }
  else
    method, params = methods.MCP_APPROVE, { name = name, approved = action == 'approve' }
  end
  compat.request(client, method, params, function(err, result)
    if err then
      return callback(nil, err.message or vim.inspect(err))
    end
    remember(client.id, result)
    callback(result)
  end)
end

--- Show the servers in a scratch buffer (`q` closes it).
function M.show(result)
  local lines = { ('MCP servers of %s'):format(result.cwd or '?'), '' }
  if #result.servers == 0 then
    table.insert(lines, 'none configured (.mcp.json, ~/.claude.json; see :help lsp_agent-mcp)')
  end
  for _, server in ipairs(result.servers) do
    table.insert(lines, M.format(server))
  end
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.bo[bufnr].filetype = 'lsp_agent_mcp'
  vim.cmd('botright split')
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.api.nvim_win_set_height(0, math.min(#lines + 1, 15))
  vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = bufnr, nowait = true })
  return bufnr
end

--- Names for :AgentMcp completion.
function M.names()
  local out = {}
  for _, entry in pairs(known) do
    for _, server in ipairs(entry.servers) do
      table.insert(out, server.name)
    end
  end
  return out
end

function M._reset()
  known, noticed = {}, {}
end

return M
