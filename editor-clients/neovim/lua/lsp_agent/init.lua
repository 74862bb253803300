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
local config = require('lsp_agent.config')
local diagnostics = require('lsp_agent.diagnostics')
local fix = require('lsp_agent.fix')
local log = require('lsp_agent.log')
local mcp = require('lsp_agent.mcp')
local permission = require('lsp_agent.permission')
local methods = require('lsp_agent.protocol').methods
local queue = require('lsp_agent.queue')
local resume = require('lsp_agent.resume')
local server = require('lsp_agent.server')
local session = require('lsp_agent.session')
local target = require('lsp_agent.target')
local trust = require('lsp_agent.trust')
local workspace = require('lsp_agent.workspace')

local M = {}

local LOG_LEVELS = { 'ERROR', 'WARN', 'INFO', 'DEBUG' }

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
    target.notify_error(tostring(merged))
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
        queue.flush(session_id, args.data.stop_reason, args.data.error ~= nil)
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

--- Send content blocks as a prompt in the client's current session (created when needed); see
--- target.lua.
M.send = target.send

--- Send typed text (with @-mentions) in the client's current session.
M.send_text = target.send_text

--- The notice for `count` prompts queued behind a running turn (queue.lua).
M.queued_notice = queue.notice

--- :AgentChat — open or focus the chat; with `opts.prompt`, send it (queued while a turn
--- runs: sent when it ends).
--- @param opts { prompt: string|nil }|nil
function M.chat(opts)
  opts = opts or {}
  local prompt = opts.prompt and vim.trim(opts.prompt) or ''
  target.with_client(function(client)
    chat.open(client.id, { focus = true, insert = prompt == '' and opts.insert ~= false })
    if prompt == '' then
      return
    end
    local current = session.current(client.id)
    if current and current.running then
      queue.add(client.id, current.id, prompt)
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
    return target.notify_error(':AgentAsk works on a selection in a file buffer')
  end
  target.with_client(function(client)
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
      target.send(client, blocks, { text = question, attachments = { label } })
    end
    if opts.question and vim.trim(opts.question) ~= '' then
      send(opts.question)
    else
      vim.ui.input({ prompt = 'Ask about ' .. label .. ': ' }, send)
    end
  end)
end

--- The server's command of "Fix with agent", the pick of its code action, and :AgentFix (fix.lua).
M.FIX_COMMAND = fix.FIX_COMMAND
M.pick_fix_action = fix.pick_fix_action
M.fix = fix.fix

--- :AgentCancel — cancel the running turn of the current session.
function M.cancel(opts)
  local s = target.session(opts and opts.client_id)
  if not session.cancel(s) then
    vim.notify('lsp-agent: no turn is running', vim.log.levels.INFO)
  end
end

--- :AgentClose — close the chat's session: the server releases it (its running turn is
--- cancelled) and the next prompt starts a new one.
function M.close(opts)
  local s = target.session(opts and opts.client_id)
  if not s then
    vim.notify('lsp-agent: no session to close', vim.log.levels.INFO)
    return
  end
  session.close(s, function(err)
    if err then
      return target.notify_error('could not close the session: ' .. err)
    end
    chat.sync(s.client_id)
  end)
end

--- :AgentRewind — pick a prompt of the current session and go back to before it (code,
--- conversation or both); see lua/lsp_agent/rewind.lua.
function M.rewind(opts)
  local s = target.session(opts and opts.client_id)
  if not s then
    vim.notify('lsp-agent: no session to rewind', vim.log.levels.INFO)
    return
  end
  if s.running then
    return target.notify_error('a turn is running; cancel it first (:AgentCancel)')
  end
  local client = vim.lsp.get_client_by_id(s.client_id)
  if not client then
    return target.notify_error('the server is not running')
  end
  require('lsp_agent.rewind').pick(client, s.id, opts and opts.done)
end

--- :AgentMode [mode] — set the permission mode of the current session (asks when no mode given).
function M.mode(mode_id)
  target.with_client(function(client)
    session.ensure(client, function(s, err)
      if not s then
        return target.notify_error('could not create a session: ' .. tostring(err))
      end
      local function apply(id)
        if not id or id == '' then
          return
        end
        session.set_mode(s, id, function(set_err)
          if set_err then
            target.notify_error('could not set the mode: ' .. set_err)
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
  local s = target.session()
  local out = {}
  for _, m in ipairs(s and s.modes and s.modes.availableModes or {}) do
    table.insert(out, m.id)
  end
  return #out > 0 and out or vim.list_slice(config.MODES)
end

M._local_time = resume.local_time

--- :AgentSessions, :AgentResume [ID] (resume.lua).
M.sessions = resume.sessions
M.resume = resume.resume

--- :AgentMcp [approve|reject|enable|disable|reconnect|login|logout NAME] — list the MCP
--- servers, or act on one (enable/disable: for this project, any scope, kept in ~/.claude.json).
--- @param args string
function M.mcp(args)
  local words = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  local action, name = words[1], words[2]
  target.with_client(function(client)
    if not action or action == 'list' then
      return mcp.list(client, function(result, err)
        if not result then
          return target.notify_error('could not list MCP servers: ' .. tostring(err))
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
      return target.notify_error('usage: :AgentMcp [approve|reject|enable|disable|reconnect|login|logout NAME]')
    end
    if action == 'login' then
      vim.notify(('lsp-agent: MCP server %s: logging in — finish in your browser'):format(name))
    end
    mcp.act(client, action, name, function(result, err)
      if not result then
        return target.notify_error(('MCP %s %s failed: %s'):format(action, name, tostring(err)))
      end
      vim.notify(('lsp-agent: MCP server %s: %s'):format(name, done[action]))
    end)
  end)
end

--- :AgentReview — open the oldest pending permission request.
function M.review()
  return permission.review_next(target.buffer_client_id(vim.api.nvim_get_current_buf()))
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
  local client_id = target.buffer_client_id(bufnr)
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
