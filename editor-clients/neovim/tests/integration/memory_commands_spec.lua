-- Memory commands from the chat: /memory lists the files and opens the one picked with
-- vim.ui.select (the server's window/showDocument, Neovim's own handler); a `# note` asks
-- which memory file with vim.ui.select, which approves the write: it lands in the open buffer
-- without a second question. Scenario: tests/clients/neovim/test_integration.py::test_memory_commands.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local asked = {}
local pick = {} -- prompt fragment -> the option name to pick (its start)
vim.ui.select = function(items, opts, on_choice)
  local names = vim.tbl_map(opts.format_item or tostring, items)
  table.insert(asked, { prompt = opts.prompt, names = names })
  for fragment, wanted in pairs(pick) do
    if opts.prompt:find(fragment, 1, true) then
      for i, name in ipairs(names) do
        if vim.startswith(name, wanted) then
          return on_choice(items[i], i)
        end
      end
    end
  end
  on_choice(nil, nil)
end

E.setup()
local agent = require('lsp_agent')
local _, client = E.open('a.py')

local function say(text)
  local current = require('lsp_agent.session').current(client.id)
  if current then
    current.last_stop = nil
  end
  agent.send_text(client.id, text)
  return E.session(client)
end

H.test('/memory lists the files and opens the one picked', function()
  pick['Open a memory file'] = 'CLAUDE.local.md'
  E.wait_idle(say('/memory'))
  H.eq(#asked, 1)
  local names = asked[1].names
  H.eq({ names[1], names[2], names[#names] },
    { 'CLAUDE.md (project)', 'CLAUDE.local.md (local)', "Don't open" })
  H.wait(E.WAIT, function()
    return vim.api.nvim_buf_get_name(0) == E.path('CLAUDE.local.md')
  end, 'CLAUDE.local.md shown')
  H.ok(E.transcript_has(client, '| `CLAUDE.md` | project |'), 'the list in the chat')
end)

H.test('a # note asks once (the file), then lands in the open buffer with its diff shown', function()
  pick['Add to memory'] = 'Project memory (local)'
  local s = say('# run make check before pushing')
  E.wait_idle(s)
  -- Picking the file approved the write: no permission window follows the choice.
  H.eq(#require('lsp_agent.permission').list(), 0)
  H.ok(E.transcript_has(client, 'CLAUDE.local.md'), 'the outcome in the chat')
  H.eq(#asked, 2)
  H.eq(asked[2].names[1]:sub(1, 14), 'Project memory')
  local bufnr = vim.fn.bufnr(E.path('CLAUDE.local.md'))
  H.eq(E.lines(bufnr), { 'my notes', '- run make check before pushing' })
end)

E.finish()
