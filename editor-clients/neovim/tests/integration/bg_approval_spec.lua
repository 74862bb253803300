-- A background run (`lsp-agent run -p --bg`, started in a terminal) asks about a Bash call:
-- the question is shown as the server sent it, naming the run, its prompt and its folder, with
-- no ": " added after the command; "Allow once" answers it.
-- Scenario: tests/clients/neovim/test_background_approval.py.
local E = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/env.lua')
local H = E.H

local run_id = assert(vim.env.LSP_AGENT_TEST_BG_RUN, 'LSP_AGENT_TEST_BG_RUN is not set')

local asked
vim.ui.select = function(items, opts, on_choice)
  asked = { prompt = opts.prompt, items = vim.tbl_map(opts.format_item or tostring, items) }
  for _, item in ipairs(items) do
    if item.title == 'Allow once' then
      return on_choice(item)
    end
  end
  on_choice(nil)
end

E.setup()
E.open('notes.txt')

H.test("the background run's question names the run, its prompt and its folder, as sent", function()
  H.wait(E.WAIT, function()
    return asked ~= nil
  end, "the background run's question")
  local where = vim.uv.fs_realpath(E.root)
  H.eq(asked.prompt, ('Background run %s ("make a file") in %s asks to use Bash: touch allowed.txt')
    :format(run_id, where))
  H.eq(asked.items, { 'Allow once', 'Deny' })
end)

E.finish()
