--- Prompts given to :AgentChat while their session's turn runs: sent together as the next
--- prompt when the turn ends (as Claude Code does), or put back in the prompt window unsent when
--- the turn is cancelled or fails.
local chat = require('lsp_agent.chat')
local target = require('lsp_agent.target')

local M = {}

--- Prompts given to :AgentChat while their session's turn ran: session id -> { client_id,
--- texts }. Sent together as the next prompt when the turn ends, as Claude Code does.
local queued = {}

--- The notice for `count` prompts queued behind a running turn: the longest wording that fits
--- `width` columns (v:echospace; a wrapped message stops Neovim at "Press ENTER").
--- @param count integer
--- @param width integer
--- @return string
function M.notice(count, width)
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

--- Queue `prompt` behind the running turn of session `session_id` (of server `client_id`),
--- with one notice for the prompts queued at once.
--- @param client_id integer
--- @param session_id string
--- @param prompt string
function M.add(client_id, session_id, prompt)
  local waiting = queued[session_id] or { client_id = client_id, texts = {} }
  queued[session_id] = waiting
  table.insert(waiting.texts, prompt)
  if not waiting.noticing then
    -- One notice for the prompts queued at once (a mapping, a script), said when they are
    -- all in: two notices in a row stop Neovim at "Press ENTER".
    waiting.noticing = true
    vim.schedule(function()
      waiting.noticing = false
      if queued[session_id] == waiting then -- not sent (or put back) meanwhile
        vim.notify(M.notice(#waiting.texts, vim.v.echospace), vim.log.levels.INFO)
      end
    end)
  end
end

--- The turn of `session_id` ended: send its queued prompts as one, or (the turn was
--- cancelled or failed) put them in the prompt window unsent, for the user to decide.
function M.flush(session_id, stop_reason, failed)
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
    target.send_text(waiting.client_id, text)
  end)
end

return M
