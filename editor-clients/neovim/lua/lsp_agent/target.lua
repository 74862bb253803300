--- The server and session a command works on (the current buffer's), and sending prompts in
--- it: shared by the commands (init.lua, fix.lua, resume.lua) and the prompt queue (queue.lua).
local actions = require('lsp_agent.actions')
local chat = require('lsp_agent.chat')
local log = require('lsp_agent.log')
local server = require('lsp_agent.server')
local session = require('lsp_agent.session')

local M = {}

--- Tell the user (an error notification) and the log.
--- @param message string
function M.notify_error(message)
  vim.notify('lsp-agent: ' .. message, vim.log.levels.ERROR)
  log.error('%s', message)
end

--- The client id a buffer belongs to (a chat buffer's server, or the attached server).
function M.buffer_client_id(bufnr)
  local id = vim.b[bufnr].lsp_agent_client_id
  if id and vim.lsp.get_client_by_id(id) then
    return id
  end
  local client = server.client_for_buf(bufnr)
  return client and client.id or nil
end

--- Call `fn(client)` with the client for the current buffer, starting a server if needed.
--- The first use of the agent in a root asks whether to trust it (server.confirm_trust).
function M.with_client(fn)
  local bufnr = vim.api.nvim_get_current_buf()
  local id = M.buffer_client_id(bufnr)
  if id then
    return server.when_ready(id, function(client, err)
      if not client then
        return M.notify_error(err)
      end
      server.confirm_trust(client, fn)
    end)
  end
  server.ensure_client(bufnr, function(client, err)
    if not client then
      return M.notify_error(err or 'no server')
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
      return M.notify_error('could not create a session: ' .. tostring(err))
    end
    session.prompt(s, blocks, display, on_done)
  end)
end

--- Send typed text (with @-mentions) in the client's current session.
function M.send_text(client_id, text, on_done)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client then
    return M.notify_error('the server of this chat is not running')
  end
  local blocks, labels = actions.text_blocks(text, client.config.root_dir)
  M.send(client, blocks, { text = text, attachments = labels }, on_done)
end

--- The current session of `client_id` (default: the current buffer's server); outside a project
--- buffer, the one session of the running servers, if there is exactly one.
function M.session(client_id)
  client_id = client_id or M.buffer_client_id(vim.api.nvim_get_current_buf())
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

return M
