--- Agent sessions: creation, prompts, cancel, modes, listing and resuming.
---
--- A session lives in one server (client). Each client has a *current* session (the one the
--- chat shows and prompts go to). Updates for a session this editor did not create (a code
--- action or command started it, or it is being resumed) create a local record on the fly.
---
--- Turns come two ways: a `lspAgent/session/prompt` request of ours (`M.prompt`), or a turn the
--- server starts itself for an agent command (`workspace/executeCommand`, e.g. the "Fix with
--- agent" code action), announced by `lspAgent/session/didStart` and closed by
--- `lspAgent/session/didEnd`. Both set `running` and end with the `LspAgentTurnEnd` event.
local compat = require('lsp_agent.compat')
local config = require('lsp_agent.config')
local log = require('lsp_agent.log')
local protocol = require('lsp_agent.protocol')
local status = require('lsp_agent.session_status')
local transcript_mod = require('lsp_agent.transcript')

local methods = protocol.methods

local M = {}

-- session id -> Session
local sessions = {}
-- client id -> current session id
local current = {}
-- client id -> callbacks waiting for a session being created
local creating = {}
-- Listeners: fn(session, changed_entry_index|nil)
local listeners = {}

--- Register `fn(session, index)`, called whenever a session changes (index = changed
--- transcript entry, nil for state-only changes such as running/usage/mode).
function M.on_change(fn)
  table.insert(listeners, fn)
end

-- One screen redraw per burst of updates (a streamed answer sends many).
local redraw_queued = false

--- After this long without an update in a running turn (ms), the status says the turn is
--- waiting for the model (it may be retrying an unreachable or overloaded endpoint).
M.QUIET_MS = 3000

-- Ticks once a second while a turn runs, so the waiting time shown stays current.
local ticker = nil

local function any_running()
  for _, s in pairs(sessions) do
    if s.running then
      return true
    end
  end
  return false
end

local function tick()
  if not any_running() then
    if ticker then
      ticker:stop()
      ticker:close()
      ticker = nil
    end
    return
  end
  vim.cmd('redrawstatus!')
end

--- A turn started or showed activity: remember when, and keep the status ticking.
local function active(session)
  session.last_activity = compat.uv.now()
  if not ticker then
    ticker = compat.uv.new_timer()
    ticker:start(1000, 1000, vim.schedule_wrap(tick))
  end
end
M.touch = active

local function emit(session, index)
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn, session, index)
    if not ok then
      log.error('session listener failed: %s', err)
    end
  end
  -- `!`: every window's status line and winbar, not only the current one's.
  vim.cmd('redrawstatus!')
  if not redraw_queued then
    redraw_queued = true
    -- Neovim does not always repaint after a callback while it waits for input; the
    -- transcript and the state shown must change without a key press.
    vim.schedule(function()
      redraw_queued = false
      vim.cmd('redraw')
    end)
  end
end
M.emit = emit

local function new_session(client_id, id, extra)
  local session = vim.tbl_extend('force', {
    id = id,
    client_id = client_id,
    transcript = transcript_mod.new(),
    modes = nil, -- { currentModeId, availableModes }
    running = false,
    request_id = nil,
    tokens = { input = 0, output = 0, cache_read = 0, cache_creation = 0 },
    last_stop = nil,
  }, extra or {})
  sessions[id] = session
  return session
end

--- A session by id.
function M.get(id)
  return sessions[id]
end

--- The current session of a client, or nil.
function M.current(client_id)
  local id = current[client_id]
  return id and sessions[id] or nil
end

--- Make `session` the current session of its client.
function M.set_current(session)
  current[session.client_id] = session.id
  emit(session, nil)
end

--- Every session known for a client.
function M.for_client(client_id)
  local out = {}
  for _, session in pairs(sessions) do
    if session.client_id == client_id then
      table.insert(out, session)
    end
  end
  return out
end

--- The mode id of a session (falls back to the configured default).
function M.mode(session)
  return (session.modes and session.modes.currentModeId) or session.transcript.mode
    or config.get().permission_mode or 'default'
end

local function client_of(session)
  return vim.lsp.get_client_by_id(session.client_id)
end

local function error_message(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- Create a session in `client` and make it current.
--- @param client vim.lsp.Client
--- @param callback fun(session: table|nil, err: string|nil)
function M.create(client, callback)
  if creating[client.id] then
    table.insert(creating[client.id], callback)
    return
  end
  creating[client.id] = { callback }
  local params = { cwd = client.config.root_dir }
  if config.get().permission_mode then
    params.mode = config.get().permission_mode
  end
  local function finish(session, err)
    local waiting = creating[client.id] or {}
    creating[client.id] = nil
    for _, cb in ipairs(waiting) do
      cb(session, err)
    end
  end
  local ok = compat.request(client, methods.SESSION_NEW, params, function(err, result)
    if err or type(result) ~= 'table' or type(result.sessionId) ~= 'string' then
      local message = err and error_message(err) or 'lspAgent/session/new returned no sessionId'
      log.error('session/new failed: %s', message)
      return finish(nil, message)
    end
    local session = sessions[result.sessionId] or new_session(client.id, result.sessionId)
    session.modes = type(result.modes) == 'table' and result.modes or nil
    if type(result.availableCommands) == 'table' then
      session.transcript.commands = result.availableCommands
    end
    log.info('session %s created in %s', session.id, params.cwd)
    M.set_current(session)
    finish(session)
  end)
  if not ok then
    finish(nil, 'the lsp-agent server is not running')
  end
end

--- The current session of `client`, created when there is none.
function M.ensure(client, callback)
  local session = M.current(client.id)
  if session then
    return callback(session)
  end
  M.create(client, callback)
end

--- Send one user turn.
--- @param session table
--- @param blocks lsp_agent.protocol.ContentBlock[]
--- @param display { text: string, attachments: string[]|nil } what the transcript shows
--- @param on_done fun(result: table|nil, err: string|nil)|nil
--- @return boolean sent
function M.prompt(session, blocks, display, on_done)
  on_done = on_done or function() end
  if session.running then
    vim.notify('lsp-agent: a turn is already running (:AgentCancel stops it)', vim.log.levels.WARN)
    return false
  end
  local client = client_of(session)
  if not client then
    vim.notify('lsp-agent: the server of this session is not running', vim.log.levels.ERROR)
    return false
  end
  emit(session, session.transcript:add_user(display.text, display.attachments))
  session.running = true
  active(session)
  session.cancel_requested = false
  local ok, request_id = compat.request(client, methods.SESSION_PROMPT,
    { sessionId = session.id, prompt = blocks }, function(err, result)
      session.running = false
      session.retry = nil
      session.request_id = nil
      if err then
        local message = error_message(err)
        session.last_stop = 'error'
        log.error('prompt failed: %s', message)
        emit(session, session.transcript:add_info('error: ' .. message))
        vim.api.nvim_exec_autocmds('User', {
          pattern = 'LspAgentTurnEnd',
          data = { session_id = session.id, error = message },
        })
        return on_done(nil, message)
      end
      result = type(result) == 'table' and result or {}
      session.last_stop = result.stopReason
      local usage = result.usage or {}
      local t = session.tokens
      t.input = t.input + (tonumber(usage.inputTokens) or 0)
      t.output = t.output + (tonumber(usage.outputTokens) or 0)
      t.cache_read = t.cache_read + (tonumber(usage.cacheReadInputTokens) or 0)
      t.cache_creation = t.cache_creation + (tonumber(usage.cacheCreationInputTokens) or 0)
      local index
      if result.stopReason ~= 'end_turn' then
        index = session.transcript:add_info('turn ended: ' .. tostring(result.stopReason))
      end
      emit(session, index)
      vim.api.nvim_exec_autocmds('User', {
        pattern = 'LspAgentTurnEnd',
        data = { session_id = session.id, stop_reason = result.stopReason },
      })
      on_done(result)
    end)
  if not ok then
    session.running = false
    emit(session, session.transcript:add_info('error: the server is not running'))
    return false
  end
  session.request_id = request_id
  emit(session, nil)
  return true
end

--- Ask the server to stop the running turn; the prompt then resolves with "cancelled".
--- @return boolean whether a cancel was sent
function M.cancel(session)
  if not session or not session.running then
    return false
  end
  local client = client_of(session)
  if not client then
    return false
  end
  session.cancel_requested = true
  -- The notification, not $/cancelRequest: Neovim drops the callback of a request it cancels,
  -- and the prompt's answer (stopReason "cancelled", usage) is still wanted.
  compat.notify(client, methods.SESSION_CANCEL, { sessionId = session.id })
  log.info('cancel sent for session %s', session.id)
  emit(session, nil)
  return true
end

--- Close a session: the server releases it (`lspAgent/session/close`: a running turn is
--- cancelled, its processes end) and it is forgotten here; the client's next prompt starts a
--- new session. `callback(err)` — err is nil once the server confirmed (or is gone).
---@param callback? fun(err: string?)
function M.close(session, callback)
  callback = callback or function() end
  local function forget()
    sessions[session.id] = nil
    if current[session.client_id] == session.id then
      current[session.client_id] = nil
    end
    log.info('session %s closed', session.id)
  end
  local client = client_of(session)
  if not client then
    forget()
    return callback(nil)
  end
  local ok = compat.request(client, methods.SESSION_CLOSE, { sessionId = session.id },
    function(err)
      if err then
        return callback(error_message(err))
      end
      forget()
      callback(nil)
    end)
  if not ok then
    forget()
    callback(nil)
  end
end

--- Change the permission mode of a session.
---@param mode_id lsp_agent.protocol.PermissionMode
function M.set_mode(session, mode_id, callback)
  callback = callback or function() end
  local client = client_of(session)
  if not client then
    return callback('the server is not running')
  end
  compat.request(client, methods.SESSION_SET_MODE, { sessionId = session.id, modeId = mode_id },
    function(err)
      if err then
        return callback(error_message(err))
      end
      session.modes = session.modes or {}
      session.modes.currentModeId = mode_id
      session.transcript.mode = mode_id
      emit(session, nil)
      callback(nil)
    end)
end

--- List the server's sessions of this project (open ones first, then the persisted ones, newest
--- first): `callback(sessions|nil, err)`, sessions as the server sends them.
---@param callback fun(sessions: lsp_agent.protocol.SessionSummary[]?, err: string?)
function M.list(client, callback)
  local params = client.config.root_dir and { cwd = client.config.root_dir } or vim.empty_dict()
  compat.request(client, methods.SESSION_LIST, params, function(err, result)
    if err then
      return callback(nil, error_message(err))
    end
    callback(type(result) == 'table' and result.sessions or {})
  end)
end

--- Whether `client`'s server serves `method`: always for a method without a gating capability;
--- for an optional one (`protocol.capability_of`), only when the server advertises that
--- capability as `true` in `capabilities.experimental.lspAgent`.
---@param client vim.lsp.Client
---@param method lsp_agent.protocol.Method
---@return boolean
function M.serves(client, method)
  local capability = protocol.capability_of[method]
  if capability == nil then
    return true
  end
  local experimental = client.server_capabilities and client.server_capabilities.experimental
  ---@type lsp_agent.protocol.AgentCapabilities?
  local caps = type(experimental) == 'table' and experimental.lspAgent or nil
  return type(caps) == 'table' and caps[capability] == true
end

--- Resume a session: the server replays its history as updates, then answers. Sent only to a
--- server that advertises `loadSession`; with another, `callback(nil, message)` says so.
---@param client vim.lsp.Client
---@param session_id string
---@param callback? fun(session: table?, err: string?)
function M.load(client, session_id, callback)
  callback = callback or function() end
  local session = sessions[session_id]
  if session then
    M.set_current(session)
    return callback(session)
  end
  if not M.serves(client, methods.SESSION_LOAD) then
    return callback(nil, 'this lsp-agent server cannot resume sessions '
      .. '(it does not advertise loadSession); it shows only sessions this editor has open')
  end
  -- Created before the request: the replayed updates arrive before the answer.
  local previous = M.current(client.id)
  session = new_session(client.id, session_id)
  M.set_current(session)
  compat.request(client, methods.SESSION_LOAD,
    { sessionId = session_id, cwd = client.config.root_dir }, function(err, result)
      if err then
        -- Nothing was resumed: forget the placeholder and keep what was current.
        sessions[session_id] = nil
        if previous then
          M.set_current(previous)
        end
        return callback(nil, error_message(err))
      end
      if type(result) == 'table' and type(result.modes) == 'table' then
        session.modes = result.modes
      end
      emit(session, nil)
      callback(session)
    end)
end

--- Handler of `lspAgent/session/update`.
---@param params lsp_agent.protocol.SessionUpdateParams
function M.handle_update(_, params, ctx)
  if type(params) ~= 'table' or type(params.sessionId) ~= 'string' then
    log.warn('session/update without sessionId: %s', vim.inspect(params))
    return
  end
  local session = sessions[params.sessionId]
  local is_new = session == nil
  if is_new then
    session = new_session(ctx.client_id, params.sessionId)
    log.info('updates for a session started elsewhere: %s', params.sessionId)
    local cur = M.current(ctx.client_id)
    if not cur or not cur.running then
      current[ctx.client_id] = session.id
    end
  end
  local update = params.update
  active(session)
  -- A retry of the model request is shown until anything else of the session arrives.
  if type(update) == 'table' and update.sessionUpdate == 'model_retry' then
    local delay = tonumber(update.delayMs) or 0
    session.retry = {
      attempt = update.attempt,
      max = update.maxRetries,
      error = update.error,
      due = compat.uv.now() + delay,
    }
  else
    session.retry = nil
  end
  local index = session.transcript:apply(update)
  if type(update) == 'table' and update.sessionUpdate == 'current_mode_update' then
    session.modes = session.modes or {}
    session.modes.currentModeId = update.currentModeId
  end
  emit(session, index)
  if is_new and current[ctx.client_id] == session.id then
    vim.api.nvim_exec_autocmds('User', {
      pattern = 'LspAgentSessionStarted',
      data = { session_id = session.id, client_id = ctx.client_id },
    })
  end
  if type(update) == 'table' then
    vim.api.nvim_exec_autocmds('User', {
      pattern = 'LspAgentUpdate',
      data = { session_id = session.id, update = update },
    })
  end
end

local function string_field(params, key)
  return type(params) == 'table' and type(params[key]) == 'string' and params[key] or nil
end

--- Handler of `lspAgent/session/didStart` `{sessionId, cwd?, title?, origin?}`: the server
--- started a turn for an agent command (a code action such as "Fix with agent", picked from
--- :AgentFix or |vim.lsp.buf.code_action()|). The session becomes the client's current one (the
--- chat shows it) and runs until `didEnd`; `LspAgentSessionStarted` is fired.
---@param params lsp_agent.protocol.SessionDidStartParams
function M.handle_did_start(_, params, ctx)
  local id = string_field(params, 'sessionId')
  if not id then
    log.warn('session/didStart without sessionId: %s', vim.inspect(params))
    return
  end
  local session = sessions[id] or new_session(ctx.client_id, id)
  local title = string_field(params, 'title') or 'Agent command'
  session.running = true
  active(session)
  session.server_turn = true
  session.cancel_requested = false
  session.last_stop = nil
  session.dead = nil
  current[ctx.client_id] = session.id
  log.info('session %s: %s (started by %s)', id, title, tostring(params.origin))
  emit(session, session.transcript:add_user(title))
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'LspAgentSessionStarted',
    data = { session_id = session.id, client_id = ctx.client_id, title = title,
      origin = string_field(params, 'origin') },
  })
end

--- Handler of `lspAgent/session/didEnd` `{sessionId, stopReason, error?}`: the turn the server
--- started is over (ignored for turns it did not announce with `didStart`).
---@param params lsp_agent.protocol.SessionDidEndParams
function M.handle_did_end(_, params, _)
  local session = sessions[string_field(params, 'sessionId') or '']
  if not session or not session.server_turn then
    log.info('session/didEnd for no server-started turn: %s', vim.inspect(params))
    return
  end
  session.server_turn = nil
  session.running = false
  local stop = string_field(params, 'stopReason')
  local error = string_field(params, 'error')
  session.last_stop = error and 'error' or stop or 'end_turn'
  local index
  if error then
    log.error('turn of session %s failed: %s', session.id, error)
    index = session.transcript:add_info('error: ' .. error)
  elseif session.last_stop ~= 'end_turn' then
    index = session.transcript:add_info('turn ended: ' .. session.last_stop)
  end
  emit(session, index)
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'LspAgentTurnEnd',
    data = { session_id = session.id, stop_reason = not error and stop or nil, error = error },
  })
end

--- Forget a client's sessions' running state after the server exited.
function M.client_exited(client_id, code)
  for _, session in pairs(sessions) do
    if session.client_id == client_id then
      session.server_turn = nil
      if session.running then
        session.running = false
        emit(session, session.transcript:add_info(('server exited (code %s)'):format(
          tostring(code))))
      end
      session.dead = true
    end
  end
  current[client_id] = nil
  creating[client_id] = nil
end

--- Token counts, retry lines, busy tools: the status line's parts (session_status.lua).
M.format_tokens = status.format_tokens
M.retry_text = status.retry_text
M.tools_busy = status.tools_busy

--- One-line status of a session: "agent default · running · 12.3k/200.0k".
function M.status_line(session)
  return status.line(session, session and M.mode(session), M.QUIET_MS)
end

return M
