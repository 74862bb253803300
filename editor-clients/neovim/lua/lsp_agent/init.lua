--- lsp-agent.nvim: the Neovim client of lsp-agent, a coding agent inside a language server.
---
--- Public API (see :help lsp_agent):
---   setup(opts)          start the server for project buffers, install handlers and keymaps
---   chat({prompt})       open/focus the chat, optionally sending a prompt
---   ask({line1, line2, question})   ask about a selection
---   fix()                fix the diagnostics at the cursor (the server's "Fix with agent")
---   cancel(), mode(id), sessions(), review(), log(), trust(bool)
---   mcp(args)            MCP servers: list, approve/reject/enable/disable/reconnect/login/logout NAME
---   status()             statusline text: mode, running state, tokens
local actions = require('lsp_agent.actions')
local chat = require('lsp_agent.chat')
local compat = require('lsp_agent.compat')
local config = require('lsp_agent.config')
local diagnostics = require('lsp_agent.diagnostics')
local log = require('lsp_agent.log')
local mcp = require('lsp_agent.mcp')
local permission = require('lsp_agent.permission')
local methods = require('lsp_agent.protocol').methods
local server = require('lsp_agent.server')
local session = require('lsp_agent.session')
local trust = require('lsp_agent.trust')
local workspace = require('lsp_agent.workspace')

local M = {}

local LOG_LEVELS = { 'ERROR', 'WARN', 'INFO', 'DEBUG' }

local function notify_error(message)
  vim.notify('lsp-agent: ' .. message, vim.log.levels.ERROR)
  log.error('%s', message)
end

--- Prompts given to :AgentChat while their session's turn ran: session id -> { client_id,
--- texts }. Sent together as the next prompt when the turn ends, as Claude Code does.
local queued = {}

--- The turn of `session_id` ended: send its queued prompts as one, or (the turn was
--- cancelled or failed) put them in the prompt window unsent, for the user to decide.
local function flush_queue(session_id, stop_reason, failed)
  local waiting = queued[session_id]
  if not waiting then
    return
  end
  queued[session_id] = nil
  local text = table.concat(waiting.texts, '\n\n')
  if failed or stop_reason == 'cancelled' then
    local c = chat.ensure(waiting.client_id)
    local kept = vim.api.nvim_buf_get_lines(c.prompt_buf, 0, -1, false)
    if #kept == 1 and kept[1] == '' then
      kept = {}
    end
    vim.list_extend(kept, vim.split(text, '\n', { plain = true }))
    vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, kept)
    vim.notify('lsp-agent: the turn ended (' .. (failed and 'error' or 'cancelled')
      .. '); the queued prompt was not sent: it is in the prompt window', vim.log.levels.WARN)
    return
  end
  vim.schedule(function()
    M.send_text(waiting.client_id, text)
  end)
end

local function install_handlers()
  local handlers = server.handlers
  handlers[methods.SESSION_UPDATE] = function(err, params, ctx)
    session.handle_update(err, params, ctx)
    if type(params) == 'table' then
      permission.on_update(params.sessionId, params.update)
    end
  end
  handlers[methods.SESSION_DID_START] = session.handle_did_start
  handlers[methods.SESSION_DID_END] = session.handle_did_end
  handlers[methods.SESSION_REQUEST_PERMISSION] = permission.handler
  handlers[methods.WORKSPACE_SAVE_DOCUMENTS] = workspace.save_documents
  handlers[methods.WORKSPACE_DID_CHANGE_FILES] = workspace.did_change_files
  handlers[methods.MCP_DID_CHANGE] = mcp.handle_did_change
  handlers[methods.MCP_ELICIT] = require('lsp_agent.elicit').handler
  handlers['workspace/applyEdit'] = workspace.apply_edit
  handlers['window/showMessageRequest'] = require('lsp_agent.ask').show_message_request
  handlers['$/cancelRequest'] = function(_, params, ctx)
    -- Request handlers are not told their request id, so a withdrawn prompt is matched only
    -- when unambiguous. The server withdraws prompts on timeout and cancel; everything else we
    -- answer at once, so the one pending permission prompt of this server is the one withdrawn.
    local list = permission.list(ctx.client_id)
    if #list == 1 then
      log.info('server withdrew request %s', vim.inspect(params and params.id))
      permission.drop(function(p)
        return p == list[1]
      end)
    end
  end
  handlers['window/logMessage'] = function(err, result, ctx)
    if type(result) == 'table' then
      log.log(LOG_LEVELS[result.type] or 'INFO', 'server: %s', tostring(result.message))
    end
    return vim.lsp.handlers['window/logMessage'](err, result, ctx)
  end
end

local function map_global(opts)
  local keys = opts.keymaps.global or {}
  local function map(modes, lhs, rhs, desc)
    if not lhs or lhs == '' then
      return
    end
    for _, mode in ipairs(modes) do
      if vim.fn.maparg(lhs, mode) == '' then
        vim.keymap.set(mode, lhs, rhs, { desc = 'lsp-agent: ' .. desc })
      end
    end
  end
  map({ 'n' }, keys.chat, '<Cmd>AgentChat<CR>', 'open the chat')
  map({ 'x' }, keys.ask, ':AgentAsk<CR>', 'ask about the selection')
  map({ 'n' }, keys.fix, '<Cmd>AgentFix<CR>', 'fix diagnostics at the cursor')
  map({ 'n' }, keys.cancel, '<Cmd>AgentCancel<CR>', 'cancel the turn')
  map({ 'n' }, keys.review, '<Cmd>AgentReview<CR>', 'review a pending permission')
end

--- Configure the plugin and start servers for project buffers.
--- @param opts table|nil see :help lsp_agent-options
function M.setup(opts)
  local ok, merged = pcall(config.set, opts)
  if not ok then
    notify_error(tostring(merged))
    return
  end
  opts = merged
  log.set_size(opts.log_size)
  install_handlers()
  local group = vim.api.nvim_create_augroup('lsp_agent', { clear = true })
  if opts.autostart then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      callback = function(args)
        -- Scheduled: the filetype (the languageId of didOpen) is set after BufReadPost.
        vim.schedule(function()
          server.attach(args.buf)
        end)
      end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        vim.schedule(function()
          server.attach(bufnr)
        end)
      end
    end
  end
  diagnostics.setup(group)
  vim.api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'LspAgentTurnEnd',
    callback = function(args)
      local session_id = args.data and args.data.session_id
      -- The server no longer waits for permission answers of a finished turn.
      permission.drop(function(p)
        return p.session_id == session_id
      end)
      if session_id then
        flush_queue(session_id, args.data.stop_reason, args.data.error ~= nil)
      end
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'LspAgentSessionStarted',
    callback = function(args)
      if config.get().chat.auto_open and args.data then
        chat.open(args.data.client_id, { focus = false })
      end
      -- A turn the server started (a code action picked from vim.lsp.buf.code_action()) is a
      -- first use of the agent too.
      local client = args.data and vim.lsp.get_client_by_id(args.data.client_id)
      if client then
        server.confirm_trust(client, function() end)
      end
    end,
  })
  server.on_exit_hooks = {
    function(client_id, code)
      session.client_exited(client_id, code)
      diagnostics.forget_client(client_id)
      permission.drop(function(p)
        return p.client_id == client_id
      end)
    end,
  }
  chat.submit_handler = function(client_id, text)
    M.send_text(client_id, text)
  end
  map_global(opts)
end

--- Setup with defaults unless setup() already ran (commands call this).
function M.ensure_setup()
  if not config.is_set() then
    M.setup({})
  end
end

--- The client id a buffer belongs to (a chat buffer's server, or the attached server).
local function buffer_client_id(bufnr)
  local id = vim.b[bufnr].lsp_agent_client_id
  if id and vim.lsp.get_client_by_id(id) then
    return id
  end
  local client = server.client_for_buf(bufnr)
  return client and client.id or nil
end

--- Call `fn(client)` with the client for the current buffer, starting a server if needed.
--- The first use of the agent in a root asks whether to trust it (server.confirm_trust).
local function with_client(fn)
  local bufnr = vim.api.nvim_get_current_buf()
  local id = buffer_client_id(bufnr)
  if id then
    return server.when_ready(id, function(client, err)
      if not client then
        return notify_error(err)
      end
      server.confirm_trust(client, fn)
    end)
  end
  server.ensure_client(bufnr, function(client, err)
    if not client then
      return notify_error(err or 'no server')
    end
    server.confirm_trust(client, fn)
  end)
end

--- Send content blocks as a prompt in the client's current session (created when needed).
--- @param client vim.lsp.Client
--- @param blocks table[] ContentBlocks
--- @param display { text: string, attachments: string[]|nil }
--- @param on_done fun(result, err)|nil
function M.send(client, blocks, display, on_done)
  chat.ensure(client.id)
  session.ensure(client, function(s, err)
    if not s then
      return notify_error('could not create a session: ' .. tostring(err))
    end
    session.prompt(s, blocks, display, on_done)
  end)
end

--- Send typed text (with @-mentions) in the client's current session.
function M.send_text(client_id, text, on_done)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client then
    return notify_error('the server of this chat is not running')
  end
  local blocks, labels = actions.text_blocks(text, client.config.root_dir)
  M.send(client, blocks, { text = text, attachments = labels }, on_done)
end

--- The notice for `count` prompts queued behind a running turn: the longest wording that fits
--- `width` columns (v:echospace; a wrapped message stops Neovim at "Press ENTER").
--- @param count integer
--- @param width integer
--- @return string
function M.queued_notice(count, width)
  local wordings = {
    'lsp-agent: a turn is running; your prompt is queued (%d) and is sent when it ends '
      .. '(:AgentCancel stops the turn and keeps it unsent)',
    'lsp-agent: prompt queued (%d): sent when the turn ends (:AgentCancel keeps it)',
    'lsp-agent: prompt queued (%d)',
  }
  for _, wording in ipairs(wordings) do
    local text = wording:format(count)
    if vim.fn.strdisplaywidth(text) <= width then
      return text
    end
  end
  return wordings[#wordings]:format(count)
end

--- :AgentChat — open or focus the chat; with `opts.prompt`, send it (queued while a turn
--- runs: sent when it ends).
--- @param opts { prompt: string|nil }|nil
function M.chat(opts)
  opts = opts or {}
  local prompt = opts.prompt and vim.trim(opts.prompt) or ''
  with_client(function(client)
    chat.open(client.id, { focus = true, insert = prompt == '' and opts.insert ~= false })
    if prompt == '' then
      return
    end
    local current = session.current(client.id)
    if current and current.running then
      local waiting = queued[current.id] or { client_id = client.id, texts = {} }
      queued[current.id] = waiting
      table.insert(waiting.texts, prompt)
      if not waiting.noticing then
        -- One notice for the prompts queued at once (a mapping, a script), said when they are
        -- all in: two notices in a row stop Neovim at "Press ENTER".
        waiting.noticing = true
        local session_id = current.id
        vim.schedule(function()
          waiting.noticing = false
          if queued[session_id] == waiting then -- not sent (or put back) meanwhile
            vim.notify(M.queued_notice(#waiting.texts, vim.v.echospace), vim.log.levels.INFO)
          end
        end)
      end
      return
    end
    M.send_text(client.id, prompt)
  end)
end

--- :AgentAsk — ask about the lines line1..line2 of the current buffer (a visual selection).
--- @param opts { line1: integer, line2: integer, question: string|nil, charwise: table|nil }
function M.ask(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  if vim.b[bufnr].lsp_agent_client_id then
    return notify_error(':AgentAsk works on a selection in a file buffer')
  end
  with_client(function(client)
    local text, range = actions.selection(bufnr, opts.line1, opts.line2, client.offset_encoding,
      opts.charwise)
    local label = ('%s:%d-%d'):format(actions.label(bufnr, client.config.root_dir), opts.line1,
      opts.line2)
    local function send(question)
      if not question or vim.trim(question) == '' then
        return
      end
      local blocks = { { type = 'text', text = question }, actions.resource(bufnr, text, range) }
      chat.open(client.id, { focus = false })
      M.send(client, blocks, { text = question, attachments = { label } })
    end
    if opts.question and vim.trim(opts.question) ~= '' then
      send(opts.question)
    else
      vim.ui.input({ prompt = 'Ask about ' .. label .. ': ' }, send)
    end
  end)
end

--- The server's command of "Fix with agent" (lsp_agent/lsp/action_prompts.py).
M.FIX_COMMAND = 'lspAgent.fixWithAgent'

--- Whether a code action is the server's "Fix with agent" (kind `quickfix`; its arguments in
--- `data` until resolved, then in `command`).
local function is_fix_action(action)
  if type(action) ~= 'table' or action.kind ~= 'quickfix' then
    return false
  end
  if type(action.data) == 'table' and action.data.action == 'fix' then
    return true
  end
  return type(action.command) == 'table' and action.command.command == M.FIX_COMMAND
end

--- The "Fix with agent" action to run: the one for `first` (the diagnostic under the cursor)
--- when the server offers it, else the first one; nil when there is none.
--- @param result lsp.CodeAction[]|nil
--- @param first vim.Diagnostic
function M.pick_fix_action(result, first)
  local found
  local wanted = 'Fix with agent: ' .. vim.split(vim.trim(first.message or ''), '\n')[1]
  for _, action in ipairs(type(result) == 'table' and result or {}) do
    if is_fix_action(action) then
      if type(action.title) == 'string' and wanted:sub(1, #action.title) == action.title then
        return action
      end
      found = found or action
    end
  end
  return found
end

--- Run the server's agent command of a code action (`workspace/executeCommand`), resolving the
--- action first when its command is left to `codeAction/resolve`. The turn runs in `session_id`
--- when given (the server uses it if it is idle, else starts a new session); it is announced by
--- `lspAgent/session/didStart`. `done(err, result)`: the command's answer `{sessionId}`.
local function execute_fix(client, action, bufnr, session_id, done)
  local function run(a)
    local command = type(a.command) == 'table' and a.command or nil
    if not command or command.command ~= M.FIX_COMMAND then
      return done('the code action has no ' .. M.FIX_COMMAND .. ' command')
    end
    local arguments = vim.deepcopy(command.arguments or {})
    if session_id and type(arguments[1]) == 'table' then
      arguments[1].sessionId = session_id
    end
    compat.request(client, 'workspace/executeCommand',
      { command = command.command, arguments = arguments }, function(err, result)
        done(err and tostring(err.message or err) or nil, result)
      end, bufnr)
  end
  if action.command == nil and compat.supports_method(client, 'codeAction/resolve', bufnr) then
    compat.request(client, 'codeAction/resolve', action, function(err, resolved)
      if err or type(resolved) ~= 'table' then
        return done('could not resolve the code action: ' .. tostring(err and err.message))
      end
      run(resolved)
    end, bufnr)
  else
    run(action)
  end
end

--- :AgentFix — fix the diagnostics at the cursor with the server's "Fix with agent" code action.
--- The agent's turn runs in the chat's current session when it is idle (else in a new one the
--- chat switches to), streams into the chat and asks for permission as usual. A server that
--- offers no such action gets a prompt with the diagnostics and the buffer text instead.
--- @param opts { on_done: fun(how: 'code_action'|'prompt'|'error', session_id: string|nil)|nil }|nil
function M.fix(opts)
  opts = opts or {}
  local on_done = opts.on_done or function() end
  local bufnr = vim.api.nvim_get_current_buf()
  local win = vim.api.nvim_get_current_win()
  local cursor = vim.api.nvim_win_get_cursor(win)
  local items = actions.diagnostics_at_cursor(bufnr, cursor[1] - 1, cursor[2])
  if #items == 0 then
    vim.notify('lsp-agent: no diagnostics at the cursor', vim.log.levels.INFO)
    return
  end
  with_client(function(client)
    local function fallback()
      local blocks, text = actions.fix_blocks(bufnr, items, client.config.root_dir)
      chat.open(client.id, { focus = false })
      M.send(client, blocks, { text = text, attachments = { actions.label(bufnr,
        client.config.root_dir) } })
      on_done('prompt')
    end
    if not compat.supports_method(client, 'textDocument/codeAction', bufnr) then
      return fallback()
    end
    local params = vim.lsp.util.make_range_params(win, client.offset_encoding)
    -- The diagnostics at the cursor go along: the bridge may not have sent them yet.
    params.context = {
      diagnostics = diagnostics.to_lsp(bufnr, items, client.offset_encoding),
      only = { 'quickfix' },
      triggerKind = 1,
    }
    compat.request(client, 'textDocument/codeAction', params, function(err, result)
      local action = not err and M.pick_fix_action(result, items[1]) or nil
      if not action then
        log.info('no "Fix with agent" code action (%s); sending a prompt',
          err and tostring(err.message) or 'none offered')
        return fallback()
      end
      log.info('running code action %q', action.title)
      local current = session.current(client.id)
      local idle = current and not current.running and not current.dead and current.id or nil
      chat.open(client.id, { focus = false })
      execute_fix(client, action, bufnr, idle, function(exec_err, answer)
        if exec_err then
          notify_error('Fix with agent failed: ' .. exec_err)
          return on_done('error')
        end
        on_done('code_action', type(answer) == 'table' and answer.sessionId or nil)
      end)
    end, bufnr)
  end)
end

local function current_session(client_id)
  client_id = client_id or buffer_client_id(vim.api.nvim_get_current_buf())
  if client_id then
    return session.current(client_id)
  end
  -- Outside a project buffer: the one running session, if there is exactly one.
  local found
  for _, client in ipairs(server.clients()) do
    local s = session.current(client.id)
    if s then
      if found then
        return nil
      end
      found = s
    end
  end
  return found
end

--- :AgentCancel — cancel the running turn of the current session.
function M.cancel(opts)
  local s = current_session(opts and opts.client_id)
  if not session.cancel(s) then
    vim.notify('lsp-agent: no turn is running', vim.log.levels.INFO)
  end
end

--- :AgentClose — close the chat's session: the server releases it (its running turn is
--- cancelled) and the next prompt starts a new one.
function M.close(opts)
  local s = current_session(opts and opts.client_id)
  if not s then
    vim.notify('lsp-agent: no session to close', vim.log.levels.INFO)
    return
  end
  session.close(s, function(err)
    if err then
      return notify_error('could not close the session: ' .. err)
    end
    chat.sync(s.client_id)
  end)
end

--- :AgentRewind — pick a prompt of the current session and go back to before it (code,
--- conversation or both); see lua/lsp_agent/rewind.lua.
function M.rewind(opts)
  local s = current_session(opts and opts.client_id)
  if not s then
    vim.notify('lsp-agent: no session to rewind', vim.log.levels.INFO)
    return
  end
  if s.running then
    return notify_error('a turn is running; cancel it first (:AgentCancel)')
  end
  local client = vim.lsp.get_client_by_id(s.client_id)
  if not client then
    return notify_error('the server is not running')
  end
  require('lsp_agent.rewind').pick(client, s.id, opts and opts.done)
end

--- :AgentMode [mode] — set the permission mode of the current session (asks when no mode given).
function M.mode(mode_id)
  with_client(function(client)
    session.ensure(client, function(s, err)
      if not s then
        return notify_error('could not create a session: ' .. tostring(err))
      end
      local function apply(id)
        if not id or id == '' then
          return
        end
        session.set_mode(s, id, function(set_err)
          if set_err then
            notify_error('could not set the mode: ' .. set_err)
          else
            vim.notify('lsp-agent: mode ' .. id)
          end
        end)
      end
      if mode_id and mode_id ~= '' then
        return apply(mode_id)
      end
      local available = s.modes and s.modes.availableModes or {}
      local items = {}
      for _, m in ipairs(available) do
        table.insert(items, m)
      end
      if #items == 0 then
        for _, id in ipairs(config.MODES) do
          table.insert(items, { id = id, name = id })
        end
      end
      vim.ui.select(items, {
        prompt = 'lsp-agent mode (now ' .. session.mode(s) .. ')',
        format_item = function(m)
          return m.description and (m.name .. ' — ' .. m.description) or m.name
        end,
      }, function(m)
        apply(m and m.id)
      end)
    end)
  end)
end

--- Mode ids for command completion.
function M.mode_names()
  local s = current_session()
  local out = {}
  for _, m in ipairs(s and s.modes and s.modes.availableModes or {}) do
    table.insert(out, m.id)
  end
  return #out > 0 and out or vim.list_slice(config.MODES)
end

--- `iso` (ISO 8601 UTC, as the server's session times) as local "YYYY-MM-DD HH:MM", as
--- `lsp-agent sessions` shows it; nil when it is not such a time.
--- @param iso string|nil
--- @return string|nil
local function local_time(iso)
  if type(iso) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, sec = iso:match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not y then
    return nil
  end
  local fields = { year = y, month = mo, day = d, hour = h, min = mi, sec = sec }
  -- os.time reads the fields as local time: add the local zone's offset from UTC.
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date('!*t', now) --[[@as osdateparam]]))
  return os.date('%Y-%m-%d %H:%M', os.time(fields) + offset) --[[@as string]]
end
M._local_time = local_time

--- :AgentSessions — list the server's sessions and resume one.
function M.sessions()
  with_client(function(client)
    session.list(client, function(list, err)
      if not list then
        return notify_error('could not list sessions: ' .. tostring(err))
      end
      if #list == 0 then
        vim.notify('lsp-agent: no sessions yet')
        return
      end
      vim.ui.select(list, {
        prompt = 'lsp-agent sessions',
        format_item = function(item)
          local parts = { item.title or item.sessionId }
          if item.title then
            table.insert(parts, item.sessionId)
          end
          local when = local_time(item.updated or item.created)
          if when then
            table.insert(parts, when)
          end
          if item.turns then
            table.insert(parts, item.turns .. (item.turns == 1 and ' prompt' or ' prompts'))
          end
          if item.interrupted then
            table.insert(parts, '(interrupted)')
          end
          table.insert(parts, vim.fn.fnamemodify(item.cwd or '', ':~'))
          if item.backgroundRun then
            -- Started in a terminal with `lsp-agent run -p --bg`, still running.
            table.insert(parts, '(running: background run ' .. item.backgroundRun .. ')')
          elseif item.busy then
            table.insert(parts, '(busy)')
          end
          return table.concat(parts, '  ')
        end,
      }, function(item)
        if not item then
          return
        end
        session.load(client, item.sessionId, function(s, load_err)
          if not s then
            return notify_error('could not resume: ' .. tostring(load_err))
          end
          chat.open(client.id, { focus = true, insert = false })
        end)
      end)
    end)
  end)
end

--- :AgentResume [ID] — resume session ID, or the newest session of this project that is not
--- open in this editor (after a restart of Neovim or the server: its chat is rebuilt from the
--- history the server replays).
--- @param id string|nil
function M.resume(id)
  id = id and vim.trim(id) or ''
  with_client(function(client)
    local function load(session_id)
      session.load(client, session_id, function(s, err)
        if not s then
          return notify_error('could not resume: ' .. tostring(err))
        end
        chat.open(client.id, { focus = true, insert = false })
      end)
    end
    if id ~= '' then
      return load(id)
    end
    session.list(client, function(list, err)
      if not list then
        return notify_error('could not list sessions: ' .. tostring(err))
      end
      for _, item in ipairs(list) do
        if not item.live and not session.get(item.sessionId) then
          return load(item.sessionId)
        end
      end
      vim.notify('lsp-agent: no saved session to resume in this project')
    end)
  end)
end

--- :AgentMcp [approve|reject|enable|disable|reconnect|login|logout NAME] — list the MCP
--- servers, or act on one (enable/disable: for this project, any scope, kept in ~/.claude.json).
--- @param args string
function M.mcp(args)
  local words = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  local action, name = words[1], words[2]
  with_client(function(client)
    if not action or action == 'list' then
      return mcp.list(client, function(result, err)
        if not result then
          return notify_error('could not list MCP servers: ' .. tostring(err))
        end
        mcp.show(result)
      end)
    end
    local done = {
      approve = 'approved',
      reject = 'rejected',
      enable = 'turned on',
      disable = 'turned off',
      reconnect = 'reconnecting',
      login = 'logged in',
      logout = 'logged out',
    }
    if not done[action] or not name then
      return notify_error('usage: :AgentMcp [approve|reject|enable|disable|reconnect|login|logout NAME]')
    end
    if action == 'login' then
      vim.notify(('lsp-agent: MCP server %s: logging in — finish in your browser'):format(name))
    end
    mcp.act(client, action, name, function(result, err)
      if not result then
        return notify_error(('MCP %s %s failed: %s'):format(action, name, tostring(err)))
      end
      vim.notify(('lsp-agent: MCP server %s: %s'):format(name, done[action]))
    end)
  end)
end

--- :AgentReview — open the oldest pending permission request.
function M.review()
  return permission.review_next(buffer_client_id(vim.api.nvim_get_current_buf()))
end

--- :AgentLog
function M.log()
  return log.open()
end

--- :AgentTrust / :AgentUntrust (:AgentTrust! = :AgentUntrust) — trust or distrust the current
--- project root. The decision is stored and every running server of the root is told at once
--- (`workspace/didChangeConfiguration` with `settings.lspAgent.trusted`): the project's memory
--- files, settings, hooks and MCP servers follow from the next turn, without a restart.
function M.trust(trusted)
  local bufnr = vim.api.nvim_get_current_buf()
  local root = server.root_for_buf(bufnr) or vim.fs.root(vim.fn.getcwd(), config.get().root_markers)
    or vim.fn.getcwd()
  trust.set(root, trusted)
  local told = 0
  for _, client in ipairs(server.clients()) do
    if client.config.root_dir == root then
      server.set_trusted(client, trusted)
      told = told + 1
    end
  end
  vim.notify(('lsp-agent: %s %s%s'):format(trusted and 'trusted' or 'not trusted', root,
    told > 0 and ' (the running server follows from the next turn)' or ''))
end

--- Statusline text for the current buffer's server: "agent default · running · 12.3k/200.0k",
--- "agent" while no session exists, "" without a server.
--- @param bufnr integer|nil
--- @return string
function M.status(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return ''
  end
  local client_id = buffer_client_id(bufnr)
  if not client_id then
    return ''
  end
  local s = session.current(client_id)
  local text = s and session.status_line(s) or 'agent'
  local pending = permission.count(client_id)
  if pending > 0 then
    text = text .. (' · %d pending'):format(pending)
  end
  return text
end

return M
