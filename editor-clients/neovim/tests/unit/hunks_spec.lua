-- Per-hunk review: splitting a proposal, composing accepted/rejected/edited hunks.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
local hunks = require('lsp_agent.hunks')

local OLD = table.concat({ 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', '' }, '\n')
local NEW = table.concat({ 'a', 'B', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', '' }, '\n')

H.test('split finds separate hunks', function()
  local p = hunks.split(OLD, NEW)
  H.eq(#p.hunks, 2)
  H.eq(p.hunks[1].old_lines, { 'b' })
  H.eq(p.hunks[1].new_lines, { 'B' })
  H.eq(p.hunks[2].old_lines, {})
  H.eq(p.hunks[2].new_lines, { 'k' })
  H.eq(p.hunks[2].old_start, 11, 'insertion before the line after "j"')
end)

H.test('all accepted gives the new text, all rejected the old text', function()
  local p = hunks.split(OLD, NEW)
  H.eq(hunks.compose(p), NEW)
  for _, h in ipairs(p.hunks) do
    h.accepted = false
  end
  H.eq(hunks.compose(p), OLD)
  H.eq(hunks.tally(p), { accepted = 0, rejected = 2, edited = 0, total = 2 })
end)

H.test('one rejected, one accepted', function()
  local p = hunks.split(OLD, NEW)
  p.hunks[1].accepted = false
  H.eq(hunks.compose(p), table.concat({ 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', '' },
    '\n'))
  H.ok(hunks.is_modified(p))
end)

H.test('edited hunk text replaces the proposal', function()
  local p = hunks.split(OLD, NEW)
  p.hunks[1].edited = { 'B1', 'B2' }
  H.eq(hunks.compose(p),
    table.concat({ 'a', 'B1', 'B2', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', '' }, '\n'))
  H.eq(hunks.tally(p), { accepted = 1, rejected = 0, edited = 1, total = 2 })
  H.eq(hunks.hunk_diff_lines(p.hunks[1]), { '@@ -2,1 +2,2 @@', '-b', '+B1', '+B2' })
  H.eq(hunks.hunk_diff_lines(p.hunks[1], p.old, 2),
    { '@@ -2,1 +2,2 @@', ' a', '-b', '+B1', '+B2', ' c', ' d' })
  -- Context stops at the file's end (not at the "" after the final newline).
  H.eq(hunks.hunk_diff_lines(p.hunks[2], p.old, 3), { '@@ -10,0 +11,1 @@', ' h', ' i', ' j', '+k' })
end)

local function round_trip(old, new)
  local p = hunks.split(old, new)
  H.eq(hunks.compose(p), new, 'accept all: ' .. vim.inspect({ old, new }))
  for _, h in ipairs(p.hunks) do
    h.accepted = false
  end
  H.eq(hunks.compose(p), old or '', 'reject all: ' .. vim.inspect({ old, new }))
end

H.test('final newline, CRLF, empty and new files round-trip byte for byte', function()
  round_trip('a\nb', 'a\nb\n')
  round_trip('a\nb\n', 'a\nb')
  round_trip('a\r\nb\r\n', 'a\r\nX\r\nb\r\n')
  round_trip('', 'x\n')
  round_trip(nil, 'new file\n')
  round_trip('x\n', '')
  round_trip('same\n', 'same\n')
  round_trip('\t🙂 tab\n', '\t🙂 tab!\n')
end)

H.test('every subset of accepted hunks composes to old text with exactly those hunks', function()
  local old = table.concat({ '1', '2', '3', '4', '5', '6', '7', '8', '9', '' }, '\n')
  local new = table.concat({ '1', 'two', '3', '4', '5', '6', '7', 'eight', '9', '10', '' }, '\n')
  local p = hunks.split(old, new)
  H.eq(#p.hunks, 3)
  for mask = 0, 7 do
    for i, h in ipairs(p.hunks) do
      h.accepted = math.floor(mask / 2 ^ (i - 1)) % 2 == 1
    end
    local expected = {
      '1', p.hunks[1].accepted and 'two' or '2', '3', '4', '5', '6', '7',
      p.hunks[2].accepted and 'eight' or '8', '9',
    }
    if p.hunks[3].accepted then
      table.insert(expected, '10')
    end
    table.insert(expected, '')
    H.eq(hunks.compose(p), table.concat(expected, '\n'), 'mask ' .. mask)
  end
end)

H.test('no change gives no hunks', function()
  H.eq(#hunks.split('x\n', 'x\n').hunks, 0)
  H.ok(not hunks.is_modified(hunks.split('x\n', 'x\n')))
end)

H.finish()
