--- `lspAgent/session/requestPermission`: ask the user without blocking the editor.
---
--- Neovim runs each server-to-client request handler in a coroutine. The handler registers a
--- pending request, opens the review window and yields; the answer (from a key in the review
--- window, vim.ui.select, or the API below) resumes it and the returned table becomes the
--- response. Closing the window means "decide later": the request stays pending (the chat's
--- winbar counts it; :AgentReview reopens it). The request is dropped (answered "cancelled")
--- when the server moves on without an answer: the tool call's status changes, or the turn ends.
---
--- Edits are reviewed per hunk. When a hunk was rejected or edited, the answer carries the
--- resulting file texts: `outcome.editedText = { [diff uri or path] = "<full new text>" }`
--- (protocol version 1).
---
--- The request says who asked (`rule`, `source`), what an "always" answer remembers
--- (`suggestedRules`) and where it may be kept (`scopes`: session, project, user). "Always"
--- answers carry `outcome.scope`: the scope picked in the prompt, the session by default.
local hunks = require('lsp_agent.hunks')
local log = require('lsp_agent.log')
local session_mod = require('lsp_agent.session')
local text = require('lsp_agent.permission_text')

local M = {}

-- Pending requests in arrival order.
local pending = {}
local counter = 0

local Pending = {}
Pending.__index = Pending

--- Redraw the screen, status lines and winbars of every window. A prompt opened or changed
--- from a server message must show without a key press: Neovim does not always redraw after
--- a callback while it waits for input (e.g. in insert mode in another window).
local function redraw()
  vim.cmd('redraw')
  vim.cmd('redrawstatus!')
end
M.redraw = redraw

local TERMINAL_TOOL_STATUS = { in_progress = true, completed = true, failed = true }

local KIND_ORDER = { allow_once = 1, allow_always = 2, reject_once = 3, reject_always = 4 }

--- The scopes of "always" answers, their meaning, who asked, "always" kinds (permission_text.lua).
M.SCOPES = text.SCOPES
M.SCOPE_DETAIL = text.SCOPE_DETAIL
M.describe_origin = text.describe_origin
M.is_always = text.is_always
local nonempty, offered_scopes = text.nonempty, text.offered_scopes

local function server_supports_edits(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  local experimental = client and client.server_capabilities
    and client.server_capabilities.experimental
  local caps = type(experimental) == 'table' and experimental.lspAgent or nil
  return type(caps) == 'table' and (tonumber(caps.protocolVersion) or 0) >= 1
end

local function new_pending(params, client_id)
  counter = counter + 1
  local tool_call = type(params.toolCall) == 'table' and params.toolCall or {}
  local rules, labels = {}, {}
  local given = type(params.suggestedRuleLabels) == 'table' and params.suggestedRuleLabels or {}
  for i, rule in ipairs(type(params.suggestedRules) == 'table' and params.suggestedRules or {}) do
    if nonempty(rule) then
      table.insert(rules, rule)
      -- What the rule covers in the user's words ("Edit src/calc.py"); the rule text otherwise.
      table.insert(labels, nonempty(given[i]) or rule)
    end
  end
  local scopes = offered_scopes(params.scopes)
  local p = setmetatable({
    n = counter,
    client_id = client_id,
    session_id = params.sessionId,
    params = params,
    tool_call = tool_call,
    options = type(params.options) == 'table' and params.options or {},
    rule = nonempty(params.rule),
    source = nonempty(params.source),
    suggested_rules = rules,
    rule_labels = labels,
    scopes = scopes,
    -- Where "always" answers go unless the user picks another scope.
    scope = vim.tbl_contains(scopes, 'session') and 'session' or scopes[1],
    files = {}, -- { path, uri, item, proposal } per diff item
    result = nil,
    co = nil,
    edits_supported = server_supports_edits(client_id),
  }, Pending)
  for _, item in ipairs(tool_call.content or {}) do
    if type(item) == 'table' and item.type == 'diff' and type(item.newText) == 'string' then
      local old = type(item.oldText) == 'string' and item.oldText or nil
      table.insert(p.files, {
        path = item.path,
        uri = item.uri,
        item = item,
        proposal = hunks.split(old, item.newText),
      })
    end
  end
  return p
end

--- Title of the tool call.
function Pending:title()
  return tostring(self.tool_call.title or self.tool_call.toolCallId or 'tool call')
end

--- The option with this id or kind (allow_once, allow_always, reject_once, reject_always).
function Pending:option(id_or_kind)
  for _, option in ipairs(self.options) do
    if option.optionId == id_or_kind then
      return option
    end
  end
  for _, option in ipairs(self.options) do
    if option.kind == id_or_kind then
      return option
    end
  end
  return nil
end

--- The options in allow-then-reject order, split into one-off and "always" answers.
--- @return table[] once, table[] always
function Pending:split_options()
  local sorted = vim.list_extend({}, self.options)
  table.sort(sorted, function(a, b)
    return (KIND_ORDER[a.kind] or 9) < (KIND_ORDER[b.kind] or 9)
  end)
  local once, always = {}, {}
  for _, option in ipairs(sorted) do
    table.insert(M.is_always(option.kind) and always or once, option)
  end
  return once, always
end

--- Pick where "always" answers are kept (one of the offered scopes).
--- @return boolean ok, string|nil error
function Pending:set_scope(scope)
  if not vim.tbl_contains(self.scopes, scope) then
    return false, ('scope %q is not offered (offered: %s)'):format(tostring(scope),
      table.concat(self.scopes, ', '))
  end
  self.scope = scope
  self:changed()
  return true
end

--- Move the scope of "always" answers to the next offered one (wrapping around).
function Pending:cycle_scope()
  local index = 1
  for i, scope in ipairs(self.scopes) do
    if scope == self.scope then
      index = i
    end
  end
  self:set_scope(self.scopes[index % #self.scopes + 1])
  return self.scope
end

--- The hunk `index` of file `file_index` (both 1-based).
function Pending:hunk(file_index, index)
  local file = self.files[file_index]
  return file and file.proposal.hunks[index] or nil
end

local function check_edits(self)
  if not self.edits_supported then
    vim.notify('lsp-agent: this server cannot apply a partly accepted edit; accept or reject '
      .. 'the whole change', vim.log.levels.WARN)
    return false
  end
  return true
end

--- Accept or reject one hunk. Returns false when the server cannot take partial edits.
function Pending:set_hunk(file_index, index, accepted)
  local hunk = assert(self:hunk(file_index, index), 'no such hunk')
  if not accepted and not check_edits(self) then
    return false
  end
  hunk.accepted = accepted
  self:changed()
  return true
end

--- Replace the proposed lines of one hunk with the user's lines (and accept it).
function Pending:edit_hunk(file_index, index, lines)
  local hunk = assert(self:hunk(file_index, index), 'no such hunk')
  if not check_edits(self) then
    return false
  end
  hunk.edited = lines
  hunk.accepted = true
  self:changed()
  return true
end

--- Whether any file's hunks were rejected or edited.
function Pending:is_modified()
  for _, file in ipairs(self.files) do
    if hunks.is_modified(file.proposal) then
      return true
    end
  end
  return false
end

local function all_rejected(self)
  if #self.files == 0 then
    return false
  end
  for _, file in ipairs(self.files) do
    local t = hunks.tally(file.proposal)
    if t.total == 0 or t.rejected < t.total then
      return false
    end
  end
  return true
end

--- Re-render the review window, if shown.
function Pending:changed()
  if self.ui and self.ui.refresh then
    self.ui.refresh()
  end
end

--- How the proposal relates to the buffers now, from the server's `proposal` updates (the
--- user typed while the prompt was open): one `{ text, group }` per file that is not
--- "current". Stale proposals would fail if approved; rebased ones still apply.
--- @return { text: string, group: string }[]
function Pending:proposal_notes()
  local out = {}
  for _, status in pairs(self.proposal or {}) do
    if status.status == 'stale' then
      table.insert(out, { text = '⚠ ' .. status.message, group = 'DiagnosticWarn' })
    elseif status.status == 'rebased' then
      table.insert(out, { text = '↻ ' .. status.message, group = 'DiagnosticInfo' })
    end
  end
  table.sort(out, function(a, b)
    return a.text < b.text
  end)
  return out
end

--- Whether the server said the proposal no longer applies (a stale review).
function Pending:is_stale()
  for _, status in pairs(self.proposal or {}) do
    if status.status == 'stale' then
      return true
    end
  end
  return false
end

--- Build the response for an option (kind or id), applying the hunk decisions. "Always"
--- answers carry `scope` (default: the scope picked in the prompt).
--- @return table|nil response, string|nil error
function Pending:response_for(id_or_kind, feedback, scope)
  local option = self:option(id_or_kind)
  if not option then
    return nil, ('no option %q offered'):format(tostring(id_or_kind))
  end
  local kind = option.kind or ''
  if M.is_always(kind) then
    scope = scope or self.scope
    if not vim.tbl_contains(self.scopes, scope) then
      return nil, ('scope %q is not offered (offered: %s)'):format(tostring(scope),
        table.concat(self.scopes, ', '))
    end
  else
    scope = nil
  end
  if kind:match('^allow') and self:is_modified() then
    local reject = all_rejected(self) and self:option('reject_once')
    if reject then
      -- Nothing left to apply: that is a rejection, with the reason for the model.
      return {
        outcome = {
          outcome = 'selected',
          optionId = reject.optionId,
          feedback = feedback or 'The user rejected every hunk of the proposed change.',
        },
      }
    end
    local edited = {}
    for _, file in ipairs(self.files) do
      edited[file.uri or file.path] = hunks.compose(file.proposal)
    end
    return {
      outcome = {
        outcome = 'selected',
        optionId = option.optionId,
        feedback = feedback,
        editedText = edited,
        scope = scope,
      },
    }
  end
  return {
    outcome = { outcome = 'selected', optionId = option.optionId, feedback = feedback, scope = scope },
  }
end

local function remove(p)
  for i, other in ipairs(pending) do
    if other == p then
      table.remove(pending, i)
      break
    end
  end
end

local function set_awaiting(p, awaiting)
  local session = p.session_id and session_mod.get(p.session_id)
  if session and p.tool_call.toolCallId then
    local index = session.transcript:set_awaiting(p.tool_call.toolCallId, awaiting)
    session_mod.emit(session, index)
  end
end

--- Finish the request with `response` (resumes the handler, which sends it).
function Pending:resolve(response)
  if self.result then
    return
  end
  self.result = response
  remove(self)
  set_awaiting(self, false)
  if self.ui and self.ui.close then
    self.ui.close()
  end
  local outcome = response.outcome or {}
  log.info('permission %d (%s): %s %s%s%s', self.n, self:title(), tostring(outcome.outcome),
    outcome.optionId or '', outcome.scope and (' in ' .. outcome.scope .. ' scope') or '',
    outcome.editedText and ' (edited)' or '')
  if self.co and coroutine.status(self.co) == 'suspended' then
    local ok, err = coroutine.resume(self.co, response)
    if not ok then
      log.error('permission handler failed after resume: %s', err)
    end
  end
  vim.cmd('redrawstatus!')
end

--- Answer with an option (id or kind); `feedback` goes back to the model; `scope` (for
--- "always" answers; default: the picked scope) says where the suggested rules are kept.
--- @return boolean answered
function Pending:answer(id_or_kind, feedback, scope)
  local response, err = self:response_for(id_or_kind, feedback, scope)
  if not response then
    vim.notify('lsp-agent: ' .. err, vim.log.levels.ERROR)
    return false
  end
  self:resolve(response)
  return true
end

--- Dismiss the prompt without deciding (the request stays pending).
function Pending:later()
  if self.ui and self.ui.close then
    self.ui.close()
  end
  if not self.result then
    vim.notify(('lsp-agent: permission for "%s" is pending — :AgentReview to decide'):format(
      self:title()), vim.log.levels.INFO)
  end
  vim.cmd('redrawstatus!')
end

--- Show the review window again.
function Pending:open()
  require('lsp_agent.review').open(self)
end

--- Pending requests, oldest first (optionally only those of one client).
function M.list(client_id)
  local out = {}
  for _, p in ipairs(pending) do
    if client_id == nil or p.client_id == client_id then
      table.insert(out, p)
    end
  end
  return out
end

--- Number of pending requests of a client (all clients when nil).
function M.count(client_id)
  return #M.list(client_id)
end

--- Open the oldest pending request (of a client, or of any).
function M.review_next(client_id)
  local p = M.list(client_id)[1] or M.list()[1]
  if not p then
    vim.notify('lsp-agent: no permission request is pending', vim.log.levels.INFO)
    return nil
  end
  p:open()
  return p
end

local CANCELLED = { outcome = { outcome = 'cancelled' } }

-- Questions that are a choice rather than a tool call (docs/protocol.md §5.1): the memory file
-- a `# note` goes to, the memory file `/memory` opens.
local CHOICE_PREFIXES = { 'memory_target_', 'memory_open_' }

--- Whether a permission request is one of those choices (asked with vim.ui.select).
--- @param params table
--- @return boolean
function M.is_choice(params)
  local id = type(params.toolCall) == 'table' and params.toolCall.toolCallId or nil
  if type(id) ~= 'string' then
    return false
  end
  for _, prefix in ipairs(CHOICE_PREFIXES) do
    if vim.startswith(id, prefix) then
      return true
    end
  end
  return false
end

--- Ask a choice with vim.ui.select over the options' names; dismissing it cancels.
--- @param p table the pending request
function M.choose(p)
  vim.ui.select(p.options, {
    prompt = 'lsp-agent: ' .. p:title(),
    format_item = function(option)
      return option.name or option.optionId
    end,
  }, function(option)
    if option then
      p:answer(option.optionId)
    else
      p:resolve(CANCELLED)
    end
  end)
end

--- Drop pending requests the server no longer waits for.
--- @param filter fun(p): boolean
function M.drop(filter)
  for _, p in ipairs(M.list()) do
    if filter(p) then
      log.info('permission %d (%s) dropped: the server moved on', p.n, p:title())
      p:resolve(CANCELLED)
    end
  end
end

--- Called for every session update: a tool call that starts running or finishes was decided
--- elsewhere (cancel, timeout, a rule), so its prompt is dropped.
function M.on_update(session_id, update)
  if type(update) ~= 'table' or update.sessionUpdate ~= 'tool_call_update' then
    return
  end
  if type(update.proposal) == 'table' then
    for _, p in ipairs(M.list()) do
      if p.session_id == session_id and p.tool_call.toolCallId == update.toolCallId then
        p.proposal = p.proposal or {}
        for _, status in ipairs(update.proposal) do
          if type(status) == 'table' and type(status.path) == 'string'
            and type(status.message) == 'string' then
            p.proposal[status.path] = status
          end
        end
        p:changed()
        log.info('permission %d (%s): %s', p.n, p:title(),
          table.concat(vim.tbl_map(function(n)
            return n.text
          end, p:proposal_notes()), '; '))
        redraw()
      end
    end
  end
  if TERMINAL_TOOL_STATUS[update.status] then
    M.drop(function(p)
      return p.session_id == session_id and p.tool_call.toolCallId == update.toolCallId
    end)
  end
end

local function fallback_sync(p)
  -- Not inside a coroutine (a caller invoked the handler directly): ask synchronously.
  local names = {}
  for i, option in ipairs(p.options) do
    table.insert(names, ('&%d %s'):format(i, option.name or option.optionId))
  end
  local choice = vim.fn.confirm('lsp-agent: ' .. p:title(), table.concat(names, '\n'), 0)
  local option = p.options[choice]
  if not option then
    return CANCELLED
  end
  return (p:response_for(option.optionId))
end

--- Handler of `lspAgent/session/requestPermission`.
---@param params lsp_agent.protocol.RequestPermissionParams
function M.handler(_, params, ctx)
  if type(params) ~= 'table' or type(params.options) ~= 'table' or #params.options == 0 then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams,
      'requestPermission needs a non-empty options list')
  end
  local p = new_pending(params, ctx.client_id)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return fallback_sync(p)
  end
  p.co = co
  table.insert(pending, p)
  set_awaiting(p, true)
  local origin = M.describe_origin(params)
  log.info('permission %d requested: %s — %s%s%s', p.n, p:title(),
    type(params.reason) == 'string' and params.reason ~= '' and params.reason or 'no reason given',
    origin and (' (' .. origin:gsub('^A', 'a') .. ')') or '',
    #p.suggested_rules > 0 and ('; "always" would keep ' .. table.concat(p.suggested_rules, ', '))
      or '')
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'LspAgentPermission',
    data = { n = p.n, session_id = p.session_id, title = p:title() },
  })
  local ok, err = pcall(function()
    if M.is_choice(params) then
      M.choose(p)
    elseif require('lsp_agent.config').get().permission.auto_open then
      p:open()
    else
      vim.notify(('lsp-agent: permission requested for "%s" — :AgentReview'):format(p:title()))
    end
  end)
  if not ok then
    log.error('could not open the review window: %s', err)
  end
  redraw()
  if p.result then
    return p.result -- answered synchronously (e.g. by a test's stubbed vim.ui.select)
  end
  return coroutine.yield()
end

return M
