--- The one-line status of a session (the statusline, the chat's winbar): its mode, the running
--- state (running, cancelling, retrying, waiting for the model) and the context or tokens used.
local compat = require('lsp_agent.compat')

local M = {}

--- Human-readable token count: 950, 12.3k, 1.2M.
function M.format_tokens(n)
  n = tonumber(n) or 0
  if n >= 1e6 then
    return ('%.1fM'):format(n / 1e6)
  elseif n >= 1e3 then
    return ('%.1fk'):format(n / 1e3)
  end
  return tostring(math.floor(n))
end

--- "retrying (2/4) in 3s — overloaded_error": a model request the server retries (the wait
--- counts down with the status ticker; "now" once it is over).
function M.retry_text(retry)
  local left = math.max(0, retry.due - compat.uv.now())
  local wait = left > 0 and ('in %ds'):format(math.ceil(left / 1000)) or 'now'
  return ('retrying (%s/%s) %s — %s'):format(
    tostring(retry.attempt),
    tostring(retry.max),
    wait,
    tostring(retry.error or 'error')
  )
end

--- Whether a tool call of the session is running or waits for the user's answer (then a quiet
--- turn is not waiting for the model).
function M.tools_busy(session)
  for _, entry in ipairs(session.transcript.entries) do
    if entry.kind == 'tool' and (entry.awaiting or entry.status == 'in_progress') then
      return true
    end
  end
  return false
end

--- One-line status of `session` in mode `mode_id`: "agent default · running · 12.3k/200.0k";
--- after `quiet_ms` (ms) without an update, a running turn is "waiting for the model".
--- @param session table|nil
--- @param mode_id string|nil
--- @param quiet_ms integer
--- @return string
function M.line(session, mode_id, quiet_ms)
  if not session then
    return ''
  end
  local parts = { 'agent ' .. mode_id }
  if session.running then
    local quiet = session.last_activity and (compat.uv.now() - session.last_activity) or 0
    if session.cancel_requested then
      table.insert(parts, 'cancelling')
    elseif session.retry then
      table.insert(parts, M.retry_text(session.retry))
    elseif quiet >= quiet_ms and not M.tools_busy(session) then
      -- No word from the server for a while: the model endpoint is slow, or being retried.
      table.insert(parts, ('waiting for the model %ds'):format(math.floor(quiet / 1000)))
    else
      table.insert(parts, 'running')
    end
  end
  local usage = session.transcript.usage
  if usage and tonumber(usage.used) then
    table.insert(parts, ('%s/%s'):format(M.format_tokens(usage.used), M.format_tokens(usage.size)))
  else
    local total = session.tokens.input + session.tokens.output
    if total > 0 then
      table.insert(parts, M.format_tokens(total) .. ' tok')
    end
  end
  return table.concat(parts, ' · ')
end

return M
