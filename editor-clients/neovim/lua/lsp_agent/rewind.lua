--- :AgentRewind — go back to before one of the session's prompts: the files the agent
--- changed since (`code`), the conversation (`conversation`) or both. A picker lists the
--- prompts (`lspAgent/session/checkpoints`), a second one what to restore; the server
--- restores open buffers through one `workspace/applyEdit` (so `u` undoes the rewind) and
--- closed files on disk. Conflicts with what you changed since are left as conflict markers
--- in the files and listed in the quickfix list.
local compat = require('lsp_agent.compat')
local methods = require('lsp_agent.protocol').methods

local M = {}

M.RESTORES = { 'both', 'code', 'conversation' }

local RESTORE_LABELS = {
  both = 'code and conversation',
  code = 'code only (files)',
  conversation = 'conversation only',
}

local function message(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- The session's prompts that can be rewound to, oldest first.
--- @param callback fun(list: table[]|nil, err: string|nil)
function M.checkpoints(client, session_id, callback)
  local ok = compat.request(client, methods.SESSION_CHECKPOINTS, { sessionId = session_id },
    function(err, result)
      if err then
        return callback(nil, message(err))
      end
      callback(result.checkpoints or {}, nil)
    end)
  if not ok then
    callback(nil, 'the server is not running')
  end
end

--- Ask the server to rewind; `callback(result, err)`.
function M.request(client, session_id, message_id, restore, callback)
  local params = { sessionId = session_id, messageId = message_id, restore = restore }
  local ok = compat.request(client, methods.SESSION_REWIND, params, function(err, result)
    if err then
      return callback(nil, message(err))
    end
    callback(result, nil)
  end)
  if not ok then
    callback(nil, 'the server is not running')
  end
end

--- One line per prompt for the picker: short id, files changed, the prompt's first line.
function M.format_item(item)
  local count = #(item.files or {})
  local files = count == 1 and '1 file' or (count .. ' files')
  return string.format('%s  %-9s %s', item.messageId:sub(1, 8), files, item.prompt or '')
end

--- Show what a rewind did: a message, and the conflicts in the quickfix list.
--- @return string summary
function M.report(result)
  local parts = {}
  if result.restored and #result.restored > 0 then
    table.insert(parts, #result.restored .. ' restored')
  end
  if result.removed and #result.removed > 0 then
    table.insert(parts, #result.removed .. ' removed')
  end
  local conflicts = result.conflicts or {}
  if #conflicts > 0 then
    table.insert(parts, #conflicts .. ' with conflicts (see the quickfix list)')
  end
  if result.conversation then
    table.insert(parts, 'conversation cut before the prompt')
  end
  local items = {}
  for _, c in ipairs(conflicts) do
    local lnum = 1
    if vim.fn.filereadable(c.path) == 1 or vim.fn.bufexists(c.path) == 1 then
      local bufnr = vim.fn.bufadd(c.path)
      vim.fn.bufload(bufnr)
      for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
        if line:sub(1, 7) == '<<<<<<<' then
          lnum = i
          break
        end
      end
    end
    table.insert(items, { filename = c.path, lnum = lnum, text = c.reason })
  end
  vim.fn.setqflist({}, 'r', { title = 'lsp-agent rewind conflicts', items = items })
  local summary = 'lsp-agent: rewound to before "' .. (result.prompt or '') .. '"'
  if #parts > 0 then
    summary = summary .. ': ' .. table.concat(parts, ', ')
  end
  if result.failure then
    summary = summary .. '. Not restored: ' .. result.failure
  end
  vim.notify(summary, result.failure and vim.log.levels.WARN or vim.log.levels.INFO)
  return summary
end

--- The picker flow: choose a prompt, then what to restore, then rewind.
--- `done(result, err)` is called at the end (nil, nil when the user cancelled).
function M.pick(client, session_id, done)
  done = done or function() end
  M.checkpoints(client, session_id, function(list, err)
    if not list then
      vim.notify('lsp-agent: could not list checkpoints: ' .. err, vim.log.levels.ERROR)
      return done(nil, err)
    end
    if #list == 0 then
      vim.notify('lsp-agent: nothing to rewind to yet')
      return done(nil, nil)
    end
    local newest_first = {}
    for i = #list, 1, -1 do
      table.insert(newest_first, list[i])
    end
    vim.ui.select(newest_first, {
      prompt = 'Rewind to before',
      format_item = M.format_item,
    }, function(item)
      if not item then
        return done(nil, nil)
      end
      vim.ui.select(M.RESTORES, {
        prompt = 'Restore',
        format_item = function(kind)
          return RESTORE_LABELS[kind]
        end,
      }, function(restore)
        if not restore then
          return done(nil, nil)
        end
        M.request(client, session_id, item.messageId, restore, function(result, req_err)
          if not result then
            vim.notify('lsp-agent: rewind failed: ' .. req_err, vim.log.levels.ERROR)
            return done(nil, req_err)
          end
          M.report(result)
          done(result, nil)
        end)
      end)
    end)
  end)
end

return M
