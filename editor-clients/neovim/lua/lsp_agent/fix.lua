--- :AgentFix — the diagnostics at the cursor fixed by the server's "Fix with agent" code action
--- (its agent command), or by a prompt with the diagnostics when the server offers no such action.
local actions = require('lsp_agent.actions')
local chat = require('lsp_agent.chat')
local compat = require('lsp_agent.compat')
local target = require('lsp_agent.target')
local diagnostics = require('lsp_agent.diagnostics')
local log = require('lsp_agent.log')
local session = require('lsp_agent.session')

local M = {}

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
  target.with_client(function(client)
    local function fallback()
      local blocks, text = actions.fix_blocks(bufnr, items, client.config.root_dir)
      chat.open(client.id, { focus = false })
      target.send(client, blocks, { text = text, attachments = { actions.label(bufnr,
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
          target.notify_error('Fix with agent failed: ' .. exec_err)
          return on_done('error')
        end
        on_done('code_action', type(answer) == 'table' and answer.sessionId or nil)
      end)
    end, bufnr)
  end)
end

return M
