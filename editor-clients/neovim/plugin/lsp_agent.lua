-- lsp-agent.nvim: user commands. The plugin starts servers only after
-- require("lsp_agent").setup(); a command used before that runs setup() with defaults.
if vim.g.loaded_lsp_agent then
  return
end
vim.g.loaded_lsp_agent = true

if vim.fn.has('nvim-0.10') ~= 1 then
  vim.api.nvim_echo({ { 'lsp-agent.nvim needs Neovim 0.10 or newer', 'ErrorMsg' } }, true, {})
  return
end

local function agent()
  local mod = require('lsp_agent')
  mod.ensure_setup()
  return mod
end

local command = vim.api.nvim_create_user_command

command('AgentChat', function(args)
  agent().chat({ prompt = args.args })
end, { nargs = '*', desc = 'lsp-agent: open the chat (and send a prompt)' })

command('AgentAsk', function(args)
  local charwise
  local start, finish = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  -- Characterwise only when the command came from that visual selection (not a typed range).
  if args.range == 2 and vim.fn.visualmode() == 'v' and start[2] == args.line1
    and finish[2] == args.line2 then
    charwise = { start_col = start[3] - 1, end_col = finish[3] - 1 }
  end
  agent().ask({ line1 = args.line1, line2 = args.line2, question = args.args, charwise = charwise })
end, { nargs = '*', range = true, desc = 'lsp-agent: ask about the selection' })

command('AgentFix', function()
  agent().fix()
end, { desc = 'lsp-agent: fix the diagnostics at the cursor' })

command('AgentCancel', function()
  agent().cancel()
end, { desc = 'lsp-agent: cancel the running turn' })

command('AgentClose', function()
  agent().close()
end, { desc = 'lsp-agent: close the chat session (the server releases it)' })

command('AgentRewind', function()
  agent().rewind()
end, { desc = 'lsp-agent: go back to before a prompt (code, conversation or both)' })

command('AgentMode', function(args)
  agent().mode(args.args)
end, {
  nargs = '?',
  complete = function()
    return agent().mode_names()
  end,
  desc = 'lsp-agent: set the permission mode',
})

command('AgentSessions', function()
  agent().sessions()
end, { desc = 'lsp-agent: list and resume sessions' })

command('AgentResume', function(args)
  agent().resume(args.args)
end, { nargs = '?', desc = 'lsp-agent: resume a saved session (default: the newest here)' })

command('AgentReview', function()
  agent().review()
end, { desc = 'lsp-agent: review a pending permission request' })

command('AgentLog', function()
  agent().log()
end, { desc = 'lsp-agent: show the plugin log' })

command('AgentTrust', function(args)
  agent().trust(not args.bang)
end, { bang = true, desc = 'lsp-agent: trust (! = distrust) the current project root' })

command('AgentUntrust', function()
  agent().trust(false)
end, { desc = 'lsp-agent: distrust the current project root' })

command('AgentMcp', function(args)
  agent().mcp(args.args)
end, {
  nargs = '*',
  complete = function(_, line)
    local words = vim.split(line, '%s+')
    if #words <= 2 then
      return { 'list', 'approve', 'reject', 'enable', 'disable', 'reconnect', 'login', 'logout' }
    end
    return require('lsp_agent.mcp').names()
  end,
  desc = 'lsp-agent: MCP servers (list; approve, reject, enable, disable, reconnect, login or logout NAME)',
})
