--- MCP servers of the lsp-agent server: their state (lspAgent/mcp/didChange, lspAgent/mcp/list),
--- approval of project servers, turning a server of any scope off/on for the project
--- (lspAgent/mcp/setEnabled, kept in the user's ~/.claude.json), reconnecting, OAuth login/logout of HTTP servers (:AgentMcp,
--- :checkhealth lsp_agent). A login's authorisation URL comes as window/showDocument
--- {external = true}, which Neovim opens with vim.ui.open (the server shows it in a message when
--- that fails).
local compat = require('lsp_agent.compat')
local methods = require('lsp_agent.protocol').methods

local M = {}

--- Last known servers per client id: { cwd = string, servers = table[] }.
local known = {}

--- Servers that already showed a "needs approval"/"needs login" notice, per client id and name.
local noticed = {}

--- The one :AgentMcp buffer and its project (nil when closed): refreshed on every didChange.
local view, view_cwd = nil, nil
local refresh_view -- defined with the buffer's code below

--- One line per server: "name  state  N tools  [logged in]  scope  (error)".
--- @param server table
--- @return string
function M.format(server)
  local parts = { server.name, server.state }
  if server.state == 'ready' then
    table.insert(parts, ('%d tool%s'):format(server.tools or 0, server.tools == 1 and '' or 's'))
  end
  if server.loggedIn == true then
    table.insert(parts, 'logged in (:AgentMcp logout ' .. server.name .. ')')
  end
  table.insert(parts, server.scope)
  table.insert(parts, server.description)
  local line = table.concat(parts, '  ')
  if server.error and server.error ~= vim.NIL and server.error ~= '' then
    line = line .. '  — ' .. tostring(server.error):gsub('\n.*', ' …')
  end
  return line
end

--- The one-line notice for the servers that newly need the user (`approve`: servers needing
--- approval, `login`: servers asking for a login), or nil. One line that fits the command line
--- (shortened step by step; one server's shortest form is kept even when it does not fit):
--- two notices at once, or one that wraps, make Neovim stop at "Press ENTER".
--- @param approve table[]
--- @param login table[]
--- @param width integer the columns a message may take without wrapping (v:echospace)
--- @return string|nil
function M.notice(approve, login, width)
  local function names(servers)
    return table.concat(vim.tbl_map(function(s)
      return s.name
    end, servers), ', ')
  end
  local function parts(describe)
    local said = {}
    if #approve == 1 then
      local s = approve[1]
      local what = describe and s.description and s.description ~= vim.NIL
        and s.description ~= '' and (' (' .. s.description .. ')') or ''
      table.insert(said, ('MCP server %s needs your approval%s: :AgentMcp approve %s')
        :format(s.name, what, s.name))
    elseif #approve > 1 then
      table.insert(said, ('MCP servers %s need your approval: :AgentMcp approve NAME')
        :format(names(approve)))
    end
    if #login == 1 then
      table.insert(said, ('MCP server %s asks you to log in: :AgentMcp login %s')
        :format(login[1].name, login[1].name))
    elseif #login > 1 then
      table.insert(said, ('MCP servers %s ask you to log in: :AgentMcp login NAME')
        :format(names(login)))
    end
    return #said > 0 and ('lsp-agent: ' .. table.concat(said, '; ')) or nil
  end
  local text = parts(true)
  if text == nil or vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  text = parts(false)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  if #approve + #login == 1 then
    -- The command alone; it names the server, so a narrow screen still learns what to type.
    local s, action = approve[1] or login[1], #approve == 1 and 'approve' or 'login'
    return ('lsp-agent: MCP server %s: :AgentMcp %s %s'):format(s.name, action, s.name)
  end
  return ('lsp-agent: %d MCP servers need your approval or a login: :AgentMcp'):format(
    #approve + #login)
end

local function remember(client_id, result)
  if type(result) ~= 'table' or type(result.servers) ~= 'table' then
    return
  end
  known[client_id] = { cwd = result.cwd, servers = result.servers }
  noticed[client_id] = noticed[client_id] or {}
  local approve, login = {}, {}
  for _, server in ipairs(result.servers) do
    if server.state == 'needs_approval' and not noticed[client_id][server.name] then
      noticed[client_id][server.name] = true
      table.insert(approve, server)
    elseif server.state == 'needs_login' and not noticed[client_id][server.name] then
      noticed[client_id][server.name] = true
      table.insert(login, server)
    elseif server.state == 'ready' and noticed[client_id][server.name] then
      noticed[client_id][server.name] = nil -- a later needs_login is worth a notice again
    end
  end
  if #approve + #login > 0 then
    vim.schedule(function()
      -- One notice for all of them (see M.notice); v:echospace is read when it is shown.
      vim.notify(M.notice(approve, login, vim.v.echospace), vim.log.levels.WARN)
    end)
  end
end

--- Handler of lspAgent/mcp/didChange (also refreshes an open :AgentMcp buffer).
---@param params lsp_agent.protocol.McpServersResult
function M.handle_did_change(_, params, ctx)
  remember(ctx.client_id, params)
  if type(params) == 'table' and type(params.servers) == 'table' then
    vim.schedule(function()
      refresh_view(params)
    end)
  end
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

--- Send approve/reject/enable/disable/reconnect/login/logout for `name`;
--- `callback(result|nil, err|nil)`. A login is answered when the browser came back (or it failed).
--- @param action 'approve'|'reject'|'enable'|'disable'|'reconnect'|'login'|'logout'
function M.act(client, action, name, callback)
  local method, params
  if action == 'enable' or action == 'disable' then
    method, params = methods.MCP_SET_ENABLED, { name = name, enabled = action == 'enable' }
  elseif action == 'reconnect' then
    method, params = methods.MCP_RECONNECT, { name = name }
  elseif action == 'login' then
    method, params = methods.MCP_LOGIN, { name = name }
  elseif action == 'logout' then
    method, params = methods.MCP_LOGOUT, { name = name }
  else
    method, params = methods.MCP_APPROVE, { name = name, approved = action == 'approve' }
  end
  compat.request(client, method, params, function(err, result)
    if err then
      return callback(nil, err.message or vim.inspect(err))
    end
    remember(client.id, result)
    if type(result) == 'table' and type(result.servers) == 'table' then
      -- The answer is the list after the action: an open :AgentMcp shows it at once (the
      -- server's didChange follows as the server starts or stops).
      vim.schedule(function()
        refresh_view(result)
      end)
    end
    callback(result)
  end)
end


local function view_lines(result)
  local lines = { ('MCP servers of %s'):format(result.cwd or '?'), '' }
  if #result.servers == 0 then
    table.insert(lines, 'none configured (.mcp.json, ~/.claude.json; see :help lsp_agent-mcp)')
  end
  for _, server in ipairs(result.servers) do
    table.insert(lines, M.format(server))
  end
  return lines
end

local function view_valid()
  return view ~= nil and vim.api.nvim_buf_is_valid(view)
end

function refresh_view(result)
  if not view_valid() or (view_cwd ~= nil and result.cwd ~= nil and result.cwd ~= view_cwd) then
    return -- closed, or another project's servers
  end
  vim.bo[view].modifiable = true
  vim.api.nvim_buf_set_lines(view, 0, -1, false, view_lines(result))
  vim.bo[view].modifiable = false
end

--- Show the servers in the :AgentMcp buffer (`q` closes it); a second call reuses the buffer
--- and its window. The buffer follows lspAgent/mcp/didChange while it is open.
function M.show(result)
  if view_valid() then
    view_cwd = result.cwd
    refresh_view(result)
    local win = vim.fn.bufwinid(view)
    if win ~= -1 then
      vim.api.nvim_set_current_win(win)
      return view
    end
  else
    view, view_cwd = vim.api.nvim_create_buf(false, true), result.cwd
    refresh_view(result)
    vim.bo[view].bufhidden = 'wipe'
    vim.bo[view].filetype = 'lsp_agent_mcp'
    vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = view, nowait = true })
  end
  vim.cmd('botright split')
  vim.api.nvim_win_set_buf(0, view)
  vim.api.nvim_win_set_height(0, math.min(vim.api.nvim_buf_line_count(view) + 1, 15))
  return view
end

-- ---- @server:uri completion in the prompt buffer ---------------------------------------------

--- The "@server:uri" mention being typed before the cursor (0-based byte column `col` of
--- `line`): the 0-based column where the text after "@" starts, and that text ("docs:gu");
--- nil when the cursor is not in such a mention.
--- @param line string
--- @param col integer
--- @return integer|nil start, string|nil query
function M.typed_resource(line, col)
  local before = line:sub(1, col)
  local at, query = before:match('()@([%w_.-]+:%S*)$')
  if not at or (at > 1 and not before:sub(at - 1, at - 1):match('%s')) then
    return nil
  end
  return at, query
end

local function items_of(result)
  local items = {}
  for _, item in ipairs(type(result) == 'table' and result.items or {}) do
    local about = item.description
    if about == nil or about == vim.NIL then
      about = item.name
    end
    table.insert(items, { word = item.label, menu = about, kind = 'mcp', dup = 1 })
  end
  return items
end

--- Completion items (:help complete-items) of the resources matching `query` (the text after
--- "@"), from lspAgent/mcp/resources; `callback(items)` ({} when the request fails).
function M.resource_items(client, query, callback)
  compat.request(client, methods.MCP_RESOURCES, { query = query }, function(err, result)
    callback(err and {} or items_of(result))
  end)
end

--- The same, waiting at most `timeout_ms` (for 'omnifunc', which must answer at once).
function M.resource_items_sync(client, query, timeout_ms)
  local items
  M.resource_items(client, query, function(found)
    items = found
  end)
  vim.wait(timeout_ms or 3000, function()
    return items ~= nil
  end, 10)
  return items or {}
end

--- While "@server:..." is typed in insert mode, open the menu of its resources (the answer
--- is dropped if the user typed on or left insert mode meanwhile).
function M.complete_resources(client_id, buf)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or vim.api.nvim_get_current_buf() ~= buf then
    return
  end
  local start, query = M.typed_resource(vim.api.nvim_get_current_line(), vim.api.nvim_win_get_cursor(0)[2])
  if not start then
    return
  end
  M.resource_items(client, query, function(items)
    vim.schedule(function()
      if #items == 0 or vim.api.nvim_get_current_buf() ~= buf or vim.fn.pumvisible() == 1
        or not vim.api.nvim_get_mode().mode:match('^i') then
        return
      end
      local now_start, now_query =
        M.typed_resource(vim.api.nvim_get_current_line(), vim.api.nvim_win_get_cursor(0)[2])
      if now_start == start and now_query == query then
        vim.fn.complete(start + 1, items)
      end
    end)
  end)
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
  known, noticed, view, view_cwd = {}, {}, nil, nil
end

return M
