--- Resuming saved sessions: :AgentSessions (pick one of the server's sessions) and :AgentResume
--- (a given one, or the newest of the project not open here); the chat is rebuilt from the
--- history the server replays.
local chat = require('lsp_agent.chat')
local target = require('lsp_agent.target')
local session = require('lsp_agent.session')

local M = {}

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
M.local_time = local_time

--- :AgentSessions — list the server's sessions and resume one.
function M.sessions()
  target.with_client(function(client)
    session.list(client, function(list, err)
      if not list then
        return target.notify_error('could not list sessions: ' .. tostring(err))
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
            return target.notify_error('could not resume: ' .. tostring(load_err))
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
  target.with_client(function(client)
    local function load(session_id)
      session.load(client, session_id, function(s, err)
        if not s then
          return target.notify_error('could not resume: ' .. tostring(err))
        end
        chat.open(client.id, { focus = true, insert = false })
      end)
    end
    if id ~= '' then
      return load(id)
    end
    session.list(client, function(list, err)
      if not list then
        return target.notify_error('could not list sessions: ' .. tostring(err))
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

return M
