--- The chat: a transcript buffer (markdown, streamed) above a prompt buffer, in a split.
---
--- One chat per server (client); it shows the client's current session and switches when the
--- current session changes (:AgentSessions). Buffers live on when their windows close, so
--- streaming continues in the background and :AgentChat shows everything when reopened.
local config = require('lsp_agent.config')
local render = require('lsp_agent.render')
local session_mod = require('lsp_agent.session')

local M = {}

-- client id -> { client_id, buf, prompt_buf, view, session_id }
local chats = {}

-- Set by init.lua: fun(client_id, text) sending the prompt typed in the chat.
M.submit_handler = nil

local function render_opts()
  local opts = config.get()
  return { icons = opts.icons, tool_output_lines = opts.chat.tool_output_lines }
end

local function make_sink(buf)
  return function(start, end_, lines)
    if not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    local follow = {}
    local count = vim.api.nvim_buf_line_count(buf)
    local current_win = vim.api.nvim_get_current_win()
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      -- Follow the stream unless the user is reading further up in the focused window.
      follow[win] = win ~= current_win or vim.api.nvim_win_get_cursor(win)[1] >= count - 1
    end
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, start, end_, false, lines)
    vim.bo[buf].modifiable = false
    local last = vim.api.nvim_buf_line_count(buf)
    for win, yes in pairs(follow) do
      if yes and vim.api.nvim_win_is_valid(win) then
        vim.api.nvim_win_set_cursor(win, { last, 0 })
      end
    end
  end
end

local function scratch(name, filetype)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then
    vim.api.nvim_buf_delete(existing, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = filetype
  return buf
end

local function map(buf, modes, lhs, rhs, desc)
  if type(lhs) == 'table' then
    for _, one in ipairs(lhs) do
      map(buf, modes, one, rhs, desc)
    end
    return
  end
  if lhs and lhs ~= false and lhs ~= '' then
    vim.keymap.set(modes, lhs, rhs, { buffer = buf, desc = desc, nowait = true })
  end
end

local function set_keymaps(chat)
  local keys = config.get().keymaps.chat or {}
  for _, buf in ipairs({ chat.buf, chat.prompt_buf }) do
    map(buf, 'n', keys.cancel, function()
      require('lsp_agent').cancel({ client_id = chat.client_id })
    end, 'lsp-agent: cancel the turn')
    map(buf, 'n', keys.close, function()
      M.close(chat.client_id)
    end, 'lsp-agent: close the chat')
    map(buf, 'n', keys.review, function()
      require('lsp_agent.permission').review_next(chat.client_id)
    end, 'lsp-agent: review a pending permission')
  end
  map(chat.buf, 'n', keys.expand, function()
    M.toggle_output(chat.client_id)
  end, 'lsp-agent: show or fold the output of the tool call under the cursor')
  map(chat.prompt_buf, 'n', keys.submit, function()
    M.submit(chat.client_id)
  end, 'lsp-agent: send the prompt')
  map(chat.prompt_buf, 'i', keys.submit_insert, function()
    if vim.fn.pumvisible() == 1 then
      -- A completion menu is open (an @-mention): the key accepts the item, it does not send.
      vim.api.nvim_feedkeys(vim.keycode('<C-y>'), 'n', false)
      return
    end
    M.submit(chat.client_id)
  end, 'lsp-agent: send the prompt')
  map(chat.prompt_buf, 'i', keys.cancel, function()
    require('lsp_agent').cancel({ client_id = chat.client_id })
  end, 'lsp-agent: cancel the turn')
end

--- The chat of a client, created (buffers only, no window) when missing.
function M.ensure(client_id)
  local chat = chats[client_id]
  if chat and vim.api.nvim_buf_is_valid(chat.buf)
    and vim.api.nvim_buf_is_valid(chat.prompt_buf) then
    return chat
  end
  chat = { client_id = client_id }
  chat.buf = scratch(('lsp-agent://chat/%d'):format(client_id), 'markdown')
  vim.bo[chat.buf].modifiable = false
  vim.bo[chat.buf].undolevels = -1
  chat.prompt_buf = scratch(('lsp-agent://prompt/%d'):format(client_id), 'markdown')
  vim.b[chat.buf].lsp_agent_client_id = client_id
  vim.b[chat.prompt_buf].lsp_agent_client_id = client_id
  chat.view = render.view(make_sink(chat.buf), render_opts())
  set_keymaps(chat)
  vim.bo[chat.prompt_buf].omnifunc = "v:lua.require'lsp_agent.chat'.omnifunc"
  vim.api.nvim_create_autocmd('TextChangedI', {
    buffer = chat.prompt_buf,
    callback = function()
      M.complete_command(client_id)
      require('lsp_agent.mcp').complete_resources(client_id, chat.prompt_buf)
    end,
  })
  chats[client_id] = chat
  M.sync(client_id)
  return chat
end

--- The slash command typed so far on the prompt's first line ("/comp"), or nil.
local function typed_command(buf)
  local cursor = vim.api.nvim_win_get_cursor(0)
  if cursor[1] ~= 1 then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] or ''
  local typed = line:sub(1, cursor[2])
  if typed:match('^/[%w_.:-]*$') then
    return typed
  end
  return nil
end

local function command_items(client_id, base)
  local session = session_mod.current(client_id)
  if not session then
    return {}
  end
  return session.transcript:command_items(base)
end

--- Offer the session's slash commands while a "/name" is typed at the start of the prompt.
function M.complete_command(client_id)
  local chat = chats[client_id]
  if not chat or vim.fn.pumvisible() == 1 then
    return
  end
  local typed = typed_command(chat.prompt_buf)
  if not typed then
    return
  end
  local items = command_items(client_id, typed)
  if #items > 0 then
    vim.fn.complete(1, items)
  end
end

--- 'omnifunc' of the prompt buffer (<C-x><C-o>): completes slash commands and "@server:uri"
--- resource mentions.
function M.omnifunc(findstart, base)
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.b[buf].lsp_agent_client_id
  local mcp = require('lsp_agent.mcp')
  local start = mcp.typed_resource(vim.api.nvim_get_current_line(), vim.api.nvim_win_get_cursor(0)[2])
  if findstart == 1 then
    return typed_command(buf) and 0 or start or -3
  end
  if base:sub(1, 1) ~= '/' then
    local client = vim.lsp.get_client_by_id(client_id)
    return client and mcp.resource_items_sync(client, base) or {}
  end
  return command_items(client_id, base)
end

--- Show all output of the tool call under the cursor in the transcript (or the summary of the
--- compaction under it), or fold it again.
--- @return boolean toggled (false: the cursor is not on a tool call)
function M.toggle_output(client_id)
  local chat = chats[client_id]
  local session = session_mod.current(client_id)
  if not chat or not session then
    return false
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local index
  for i = #session.transcript.entries, 1, -1 do
    local start = chat.view:entry_start(i)
    if start and start <= line then
      index = i
      break
    end
  end
  local entry = index and session.transcript.entries[index]
  -- A tool call's output, or a compaction's summary.
  if not entry or not (entry.kind == 'tool' or (entry.kind == 'info' and entry.summary)) then
    return false
  end
  entry.expanded = not entry.expanded or nil
  chat.view:refresh(session.transcript, index)
  return true
end

--- The chat of a client if it exists.
function M.get(client_id)
  return chats[client_id]
end

--- Show the client's current session in its chat (re-render when the session changed).
function M.sync(client_id, index)
  local chat = chats[client_id]
  if not chat then
    return
  end
  local session = session_mod.current(client_id)
  if not session then
    if chat.session_id then
      -- The session was closed: show an empty chat until the next prompt starts one.
      chat.session_id = nil
      chat.view:reset()
    end
    return
  end
  if chat.session_id ~= session.id then
    chat.session_id = session.id
    chat.view:reset()
    chat.view:refresh(session.transcript, nil)
  else
    chat.view:refresh(session.transcript, index)
  end
end

session_mod.on_change(function(session, index)
  local chat = chats[session.client_id]
  if chat and session_mod.current(session.client_id) == session then
    M.sync(session.client_id, index)
  end
end)

local function chat_windows(chat)
  local transcript_win, prompt_win
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local role = vim.w[win].lsp_agent_chat
    if role == 'transcript' then
      transcript_win = transcript_win or win
    elseif role == 'prompt' then
      prompt_win = prompt_win or win
    end
  end
  if transcript_win and chat then
    vim.api.nvim_win_set_buf(transcript_win, chat.buf)
  end
  if prompt_win and chat then
    vim.api.nvim_win_set_buf(prompt_win, chat.prompt_buf)
  end
  return transcript_win, prompt_win
end

local function style(win, role)
  vim.w[win].lsp_agent_chat = role
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.foldcolumn = '0'
  wo.spell = false
  if role == 'transcript' then
    wo.winbar = "%!v:lua.require'lsp_agent.chat'.winbar()"
    wo.conceallevel = 2
    -- A long tool output line (`    │ …`) or list item wraps under its own text, not under
    -- the gutter: continuation lines are indented by the match of 'formatlistpat'.
    wo.breakindent = true
    wo.breakindentopt = 'list:-1'
    vim.bo[vim.api.nvim_win_get_buf(win)].formatlistpat = [[^\s*\(│\|[-*+]\|\d\+[.)]\)\s*]]
  else
    wo.winbar = ' prompt — ' .. M.prompt_hint()
  end
end

--- The prompt window's key hint, true in both modes: "<CR> sends · <C-j> new line".
function M.prompt_hint()
  local keys = config.get().keymaps.chat or {}
  local insert = keys.submit_insert
  local first = type(insert) == 'table' and insert[1] or insert
  if first == keys.submit and first then
    return first .. ' sends · <C-j> new line'
  end
  local parts = {}
  if first then
    table.insert(parts, first .. ' sends (insert mode)')
  end
  if keys.submit then
    table.insert(parts, keys.submit .. ' sends (normal mode)')
  end
  return table.concat(parts, ' · ')
end

--- Open (or focus) the chat of a client.
--- @param client_id integer
--- @param opts { focus: boolean|nil, insert: boolean|nil }|nil
--- @return table chat
function M.open(client_id, opts)
  opts = opts or {}
  local chat = M.ensure(client_id)
  M.sync(client_id)
  local cfg = config.get().chat
  local transcript_win, prompt_win = chat_windows(chat)
  local origin = vim.api.nvim_get_current_win()
  if not transcript_win then
    local splits = { right = 'right', left = 'left', bottom = 'below', top = 'above' }
    local split = splits[cfg.position]
    local vertical = split == 'right' or split == 'left'
    transcript_win = vim.api.nvim_open_win(chat.buf, false, {
      split = split,
      win = -1,
      width = vertical and math.min(cfg.width, math.floor(vim.o.columns * 0.6)) or nil,
      height = (not vertical) and cfg.height or nil,
    })
    style(transcript_win, 'transcript')
  end
  if not prompt_win then
    prompt_win = vim.api.nvim_open_win(chat.prompt_buf, false, {
      split = 'below',
      win = transcript_win,
      height = cfg.prompt_height,
    })
    style(prompt_win, 'prompt')
  end
  vim.api.nvim_win_set_cursor(transcript_win, { vim.api.nvim_buf_line_count(chat.buf), 0 })
  if opts.focus ~= false then
    vim.api.nvim_set_current_win(prompt_win)
    if opts.insert then
      vim.cmd('startinsert!')
    end
  elseif vim.api.nvim_win_is_valid(origin) then
    vim.api.nvim_set_current_win(origin)
  end
  return chat
end

--- Whether the chat of a client is visible in the current tab.
function M.is_open(client_id)
  local chat = chats[client_id]
  if not chat then
    return false
  end
  return vim.fn.bufwinid(chat.buf) ~= -1
end

--- Close the chat windows of a client (the buffers and the session live on).
function M.close(client_id)
  local chat = chats[client_id]
  if not chat then
    return
  end
  for _, buf in ipairs({ chat.prompt_buf, chat.buf }) do
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if #vim.api.nvim_list_wins() > 1 then
        vim.api.nvim_win_close(win, true)
      end
    end
  end
end

--- Send the text of the prompt buffer and clear it.
function M.submit(client_id)
  local chat = chats[client_id]
  if not chat then
    return
  end
  local lines = vim.api.nvim_buf_get_lines(chat.prompt_buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, '\n'))
  if text == '' then
    return
  end
  local current = session_mod.current(client_id)
  if current and current.running then
    vim.notify('lsp-agent: a turn is already running (:AgentCancel stops it)', vim.log.levels.WARN)
    return
  end
  vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, {})
  if M.submit_handler then
    M.submit_handler(client_id, text)
  end
end

--- Winbar of the transcript window: the session's status line.
function M.winbar()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_win_get_buf(win)
  local client_id = vim.b[buf].lsp_agent_client_id
  local session = client_id and session_mod.current(client_id)
  if not session then
    return ' lsp-agent — no session yet'
  end
  local pending = require('lsp_agent.permission').count(client_id)
  local text = ' ' .. session_mod.status_line(session):gsub('%%', '%%%%')
  if pending > 0 then
    text = text .. (' · %d permission(s) pending (%s)'):format(pending,
      config.get().keymaps.chat.review or ':AgentReview')
  end
  return text
end

return M
