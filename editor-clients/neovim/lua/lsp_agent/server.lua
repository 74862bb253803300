--- Starting the server: one `vim.lsp` client named "lsp_agent" per project root.
---
--- A file buffer gets the client of its root (found with the root markers). The root's trust is
--- resolved first (asked once, see trust.lua) and sent as `initializationOptions.lspAgent.trusted`.
--- Commands that need a server outside a project buffer (a chat opened from a scratch buffer)
--- start one for the current directory without attaching a buffer.
local compat = require('lsp_agent.compat')
local config = require('lsp_agent.config')
local log = require('lsp_agent.log')
local trust = require('lsp_agent.trust')

local M = {}

M.NAME = 'lsp_agent'

-- client id -> { root, trusted, init_result, ready = bool, waiting = { fn(client) } }
local clients = {}

--- Server-to-client handlers, filled in by init.lua (avoids a require cycle).
M.handlers = {}

--- Hooks called with (client) after initialization and (client_id, code, signal) on exit.
M.on_ready_hooks = {}
M.on_exit_hooks = {}

--- State kept for a client id (nil for clients that are not ours).
function M.info(client_id)
  return clients[client_id]
end

--- The project root of a buffer, or nil when the buffer is not a project file.
--- @param bufnr integer
--- @return string|nil
function M.root_for_buf(bufnr)
  local opts = config.get()
  if type(opts.root_dir) == 'string' then
    return opts.root_dir
  elseif type(opts.root_dir) == 'function' then
    return opts.root_dir(bufnr)
  end
  return vim.fs.root(bufnr, opts.root_markers)
end

--- Whether a buffer should get the server: a normal, named file buffer of an allowed filetype.
function M.wants_buf(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  local filetypes = config.get().filetypes
  return filetypes == nil or vim.tbl_contains(filetypes, vim.bo[bufnr].filetype)
end

local function client_capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  -- Neovim's apply_workspace_edit handles versioned documentChanges but does not advertise them;
  -- versioned edits are how the server avoids clobbering text the user typed meanwhile.
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  return caps
end

--- The `vim.lsp.start()` config for a root.
--- @param root string
--- @param trusted boolean
--- @return table
function M.client_config(root, trusted)
  local opts = config.get()
  return {
    name = M.NAME,
    cmd = opts.cmd,
    cmd_env = opts.cmd_env,
    root_dir = root,
    capabilities = client_capabilities(),
    handlers = M.handlers,
    init_options = {
      lspAgent = {
        trusted = trusted,
        permissionMode = opts.permission_mode,
        model = opts.model,
        logLevel = opts.server_log_level,
        -- nil unless set; an empty table would be sent as [] (not an object), so it is dropped
        mcpServers = (opts.mcp_servers and next(opts.mcp_servers)) and opts.mcp_servers or nil,
        clientCapabilities = { saveDocuments = true, reloadDocuments = true, mcpElicitation = true },
      },
    },
    on_init = function(client, result)
      local info = clients[client.id] or {}
      clients[client.id] = info
      info.root, info.trusted, info.init_result = root, trusted, result
      info.ready = true
      local server = result and result.serverInfo or {}
      log.info('server %s %s started for %s (trusted=%s, encoding=%s)', server.name or '?',
        server.version or '?', root, tostring(trusted), client.offset_encoding)
      vim.schedule(function()
        for _, hook in ipairs(M.on_ready_hooks) do
          hook(client)
        end
        local waiting = info.waiting or {}
        info.waiting = {}
        for _, fn in ipairs(waiting) do
          fn(client)
        end
      end)
    end,
    on_exit = function(code, signal, client_id)
      local info = clients[client_id]
      clients[client_id] = nil
      log.info('server for %s exited (code %s, signal %s)', info and info.root or '?',
        tostring(code), tostring(signal))
      vim.schedule(function()
        for _, fn in ipairs(info and info.waiting or {}) do
          fn(nil, ('the lsp-agent server exited (code %s)'):format(tostring(code)))
        end
        for _, hook in ipairs(M.on_exit_hooks) do
          hook(client_id, code, signal)
        end
      end)
    end,
  }
end

--- Our client attached to a buffer, if any.
--- @return vim.lsp.Client|nil
function M.client_for_buf(bufnr)
  return vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr })[1]
end

--- Our running client for a root, if any.
function M.client_for_root(root)
  for _, client in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    if client.config.root_dir == root and not compat.is_stopped(client) then
      return client
    end
  end
  return nil
end

--- All our running clients.
function M.clients()
  return vim.lsp.get_clients({ name = M.NAME })
end

-- A server that cannot start is reported once per Neovim session (it is retried for every
-- buffer, which must not flood the user); details go to :AgentLog every time.
local function start_failed(err)
  local cmd = config.get().cmd
  local shown = type(cmd) == 'table' and table.concat(cmd, ' ') or tostring(cmd)
  local reason = M.start_failure_reason(cmd, err)
  log.error('could not start %s: %s', shown, reason)
  vim.notify_once(('lsp-agent: could not start the server (%s); see :checkhealth lsp_agent')
    :format(shown), vim.log.levels.ERROR)
  return ('could not start the lsp-agent server (%s): %s; see :checkhealth lsp_agent'):format(
    shown, reason)
end

--- Why starting `cmd` failed, in words (`vim.lsp.start` returns nil without an error when the
--- executable is missing).
--- @param cmd table|function
--- @param err any the error pcall caught, or nil
--- @return string
function M.start_failure_reason(cmd, err)
  if err ~= nil and tostring(err) ~= '' then
    return tostring(err)
  end
  local exe = type(cmd) == 'table' and cmd[1] or nil
  if type(exe) == 'string' and vim.fn.executable(exe) ~= 1 then
    return ('%q is not an executable on PATH'):format(exe)
  end
  return 'the command did not start (see :AgentLog and :LspLog)'
end

local function remember(client_id, root, trusted)
  if client_id and not clients[client_id] then
    clients[client_id] = { root = root, trusted = trusted, ready = false, waiting = {} }
  end
end

--- Start (or reuse) the client of a buffer's root and attach the buffer.
--- Does nothing for buffers that are not project files.
--- @param bufnr integer
--- @param callback fun(client: vim.lsp.Client|nil, err: string|nil)|nil
function M.attach(bufnr, callback)
  callback = callback or function() end
  if not M.wants_buf(bufnr) then
    return callback(nil, 'not a project file buffer')
  end
  local root = M.root_for_buf(bufnr)
  if not root then
    return callback(nil, 'no project root found (root_markers)')
  end
  -- Opening a file never asks about trust: without a decision the server starts untrusted,
  -- and the question waits for the first use of the agent (M.confirm_trust).
  local trusted = trust.get(root) == true
  local ok, client_id = pcall(vim.lsp.start, M.client_config(root, trusted),
    { bufnr = bufnr, silent = true })
  if not ok or not client_id then
    return callback(nil, start_failed(ok and nil or client_id))
  end
  remember(client_id, root, trusted)
  M.when_ready(client_id, callback)
end

--- Tell a running server its root's trust changed (`workspace/didChangeConfiguration` with
--- `settings.lspAgent.trusted`: the server then loads or drops the project's configuration).
--- @param client vim.lsp.Client
--- @param trusted boolean
function M.set_trusted(client, trusted)
  local info = clients[client.id]
  if info then
    info.trusted = trusted
  end
  client.settings = vim.tbl_deep_extend('force', client.settings or {},
    { lspAgent = { trusted = trusted } })
  compat.notify(client, 'workspace/didChangeConfiguration', { settings = client.settings })
  log.info('server for %s told trusted=%s', client.config.root_dir or '?', tostring(trusted))
end

--- Before the agent is first used in a root: ask about trust if no decision exists (and the
--- user did not answer "Not now" in this Neovim session); a "Trust" answer reaches the running
--- server at once. Then `callback(client)`.
--- @param client vim.lsp.Client
--- @param callback fun(client: vim.lsp.Client)
function M.confirm_trust(client, callback)
  local root = client.config.root_dir
  if not root or not trust.needs_question(root) then
    return callback(client)
  end
  trust.resolve(root, function(trusted)
    local info = clients[client.id]
    if trusted and not (info and info.trusted) then
      M.set_trusted(client, true)
    end
    callback(client)
  end)
end

--- Whether a client has finished `initialize` (our own flag set in on_init, or Neovim's).
function M.is_ready(client)
  local info = clients[client.id]
  return client.initialized == true or (info ~= nil and info.ready == true)
end

--- Call `fn(client)` once the client has finished initializing (at once if it has),
--- or `fn(nil, err)` if it exits first.
function M.when_ready(client_id, fn)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client then
    return fn(nil, 'the lsp-agent server is not running')
  end
  if M.is_ready(client) then
    return fn(client)
  end
  local info = clients[client_id] or { ready = false, waiting = {} }
  clients[client_id] = info
  info.waiting = info.waiting or {}
  table.insert(info.waiting, fn)
end

--- The client for a buffer, starting a server when needed: the buffer's own client, else the
--- client of the buffer's root, else one for the current directory's root (or the directory).
--- @param bufnr integer
--- @param callback fun(client: vim.lsp.Client|nil, err: string|nil)
function M.ensure_client(bufnr, callback)
  local client = M.client_for_buf(bufnr)
  if client then
    return M.when_ready(client.id, callback)
  end
  if M.wants_buf(bufnr) and M.root_for_buf(bufnr) then
    return M.attach(bufnr, callback)
  end
  local cwd = vim.fn.getcwd()
  local root = vim.fs.root(cwd, config.get().root_markers) or cwd
  client = M.client_for_root(root)
  if client then
    return M.when_ready(client.id, callback)
  end
  local trusted = trust.get(root) == true
  local ok, client_id = pcall(compat.start_detached, M.client_config(root, trusted))
  if not ok or not client_id then
    return callback(nil, start_failed(ok and nil or client_id))
  end
  remember(client_id, root, trusted)
  M.when_ready(client_id, callback)
end

--- Stop every client of a root (used after a trust change) and re-attach its buffers.
function M.restart_root(root)
  local buffers = {}
  for _, client in ipairs(M.clients()) do
    if client.config.root_dir == root then
      for bufnr in pairs(client.attached_buffers or {}) do
        table.insert(buffers, bufnr)
      end
      if compat.has_011 then
        client:stop()
      else
        client.stop()
      end
    end
  end
  local function reattach()
    if M.client_for_root(root) then
      return false
    end
    for _, bufnr in ipairs(buffers) do
      M.attach(bufnr)
    end
    return true
  end
  local timer = compat.uv.new_timer()
  local tries = 0
  -- Wait (bounded: 5 s) until the old client is gone; vim.lsp.start would otherwise reuse it.
  timer:start(50, 100, vim.schedule_wrap(function()
    tries = tries + 1
    if reattach() or tries > 50 then
      timer:stop()
      timer:close()
    end
  end))
end

return M
