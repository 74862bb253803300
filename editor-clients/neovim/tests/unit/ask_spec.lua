-- The server's questions (window/showMessageRequest) are shown as sent: no ": " added after
-- a question that ends with a command ("asks to use Bash: make test").
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local ask = require('lsp_agent.ask')

H.test('the question is the prompt as sent; the picked action is the answer', function()
  local seen
  vim.ui.select = function(items, opts, on_choice)
    seen = { prompt = opts.prompt, items = vim.tbl_map(opts.format_item, items) }
    on_choice(items[1])
  end
  local answer
  local co = coroutine.create(function()
    answer = ask.show_message_request(nil, {
      type = 2,
      message = 'Background run ab12cd34 in /home/dev/p asks to use Bash: make test',
      actions = { { title = 'Allow once' }, { title = 'Deny' } },
    }, {})
  end)
  coroutine.resume(co)
  H.wait(1000, function()
    return answer ~= nil
  end, 'the answer')
  H.eq(seen, {
    prompt = 'Background run ab12cd34 in /home/dev/p asks to use Bash: make test',
    items = { 'Allow once', 'Deny' },
  })
  H.eq(answer, { title = 'Allow once' })
end)

H.test('a dismissed question answers null', function()
  vim.ui.select = function(_, _, on_choice)
    on_choice(nil)
  end
  local answer
  local co = coroutine.create(function()
    answer = ask.show_message_request(nil, { type = 3, message = 'Open example.com?',
      actions = { { title = 'Open example.com' } } }, {})
  end)
  coroutine.resume(co)
  H.wait(1000, function()
    return answer ~= nil
  end, 'the answer')
  H.eq(answer, vim.NIL)
end)

H.finish()
