--- The server's questions (`window/showMessageRequest`: a background run's approval, an MCP
--- server's consent to open a page, ...) with vim.ui.select. Neovim's own handler adds ": " to
--- the question, which then reads "asks to use Bash: make test: "; the server's questions
--- are whole sentences, so this one shows them as sent.
local M = {}

local function title(action)
  local text = action.title:gsub('\r\n', '\\r\\n'):gsub('\n', '\\n')
  return text
end

--- Handler of window/showMessageRequest (runs in the request's coroutine; outside one,
--- Neovim's own handler answers).
function M.show_message_request(err, params, ctx)
  local co, is_main = coroutine.running()
  if type(params) ~= 'table' or not co or is_main then
    return vim.lsp.handlers['window/showMessageRequest'](err, params, ctx)
  end
  vim.ui.select(params.actions or {}, {
    kind = 'lsp_message',
    prompt = params.message,
    format_item = title,
  }, function(choice)
    -- Scheduled: a synchronous vim.ui.select would resume before the yield below.
    vim.schedule(function()
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

return M
