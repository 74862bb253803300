--- Per-hunk review of a proposed file change.
---
--- A proposal is (old text, new text). `split()` cuts it into hunks; each hunk can be accepted,
--- rejected, or replaced by text the user wrote; `compose()` builds the resulting file text.
--- Texts are split on "\n" only, so "\r" of CRLF files stays part of each line and a missing or
--- present final newline round-trips exactly: compose() with every hunk accepted returns the
--- new text byte for byte, with every hunk rejected the old text.
local M = {}

local diff = (vim.text and vim.text.diff) or vim.diff

local function lines_of(text)
  return vim.split(text, '\n', { plain = true })
end

--- Cut a proposal into hunks.
--- @param old_text string|nil nil for a new file
--- @param new_text string
--- @return table proposal { old = string[], hunks = Hunk[] } where Hunk =
---   { old_start (1-based first old line replaced; for pure insertions the line before which
---     the new lines go), old_count, old_lines, new_lines, accepted = true, edited = nil }
function M.split(old_text, new_text)
  local old = lines_of(old_text or '')
  local new = lines_of(new_text)
  -- Diff the line lists joined back with a final "\n" so every element is a whole line for
  -- xdiff and indices map 1:1 onto the lists (the last element is "" after a final newline).
  local indices = diff(table.concat(old, '\n') .. '\n', table.concat(new, '\n') .. '\n', {
    result_type = 'indices',
    algorithm = 'histogram',
  })
  local hunks = {}
  for _, h in ipairs(indices) do
    local start_a, count_a, start_b, count_b = h[1], h[2], h[3], h[4]
    -- xdiff reports a pure insertion as "after line start_a"; normalise to "before line".
    local old_start = count_a == 0 and start_a + 1 or start_a
    local new_start = count_b == 0 and start_b + 1 or start_b
    table.insert(hunks, {
      old_start = old_start,
      old_count = count_a,
      old_lines = vim.list_slice(old, old_start, old_start + count_a - 1),
      new_start = new_start,
      new_lines = vim.list_slice(new, new_start, new_start + count_b - 1),
      accepted = true,
      edited = nil,
    })
  end
  return { old = old, hunks = hunks }
end

--- The lines a hunk contributes to the result.
--- @return string[]
function M.chosen_lines(hunk)
  if not hunk.accepted then
    return hunk.old_lines
  end
  return hunk.edited or hunk.new_lines
end

--- The file text that results from the current hunk decisions.
--- @param proposal table from `split()`
--- @return string
function M.compose(proposal)
  local out = {}
  local pos = 1
  for _, hunk in ipairs(proposal.hunks) do
    for i = pos, hunk.old_start - 1 do
      table.insert(out, proposal.old[i])
    end
    vim.list_extend(out, M.chosen_lines(hunk))
    pos = hunk.old_start + hunk.old_count
  end
  for i = pos, #proposal.old do
    table.insert(out, proposal.old[i])
  end
  return table.concat(out, '\n')
end

--- Summary of the decisions.
--- @return { accepted: integer, rejected: integer, edited: integer, total: integer }
function M.tally(proposal)
  local t = { accepted = 0, rejected = 0, edited = 0, total = #proposal.hunks }
  for _, hunk in ipairs(proposal.hunks) do
    if not hunk.accepted then
      t.rejected = t.rejected + 1
    elseif hunk.edited then
      t.edited = t.edited + 1
    else
      t.accepted = t.accepted + 1
    end
  end
  return t
end

--- Whether the result differs from the proposal as sent (some hunk rejected or edited).
--- @return boolean
function M.is_modified(proposal)
  local t = M.tally(proposal)
  return t.rejected > 0 or t.edited > 0
end

--- Lines showing one hunk as a unified-diff fragment: "@@ -a,b +c,d @@", " context",
--- "-old", "+proposed", " context" (the proposed lines are the user's edited text when there
--- is one; `context` unchanged lines of `old` around the hunk, default 0).
--- @param hunk table
--- @param old string[]|nil the proposal's old lines (needed for context)
--- @param context integer|nil
--- @return string[]
function M.hunk_diff_lines(hunk, old, context)
  context = old and context or 0
  local proposed = hunk.edited or hunk.new_lines
  -- Unified-diff convention: an empty side names the line after which it sits.
  local lines = {
    ('@@ -%d,%d +%d,%d @@'):format(hunk.old_count == 0 and hunk.old_start - 1 or hunk.old_start,
      hunk.old_count, #proposed == 0 and hunk.new_start - 1 or hunk.new_start, #proposed),
  }
  for i = math.max(1, hunk.old_start - context), hunk.old_start - 1 do
    table.insert(lines, ' ' .. old[i])
  end
  for _, line in ipairs(hunk.old_lines) do
    table.insert(lines, '-' .. line)
  end
  for _, line in ipairs(proposed) do
    table.insert(lines, '+' .. line)
  end
  local after = hunk.old_start + hunk.old_count
  -- The last element of `old` is the "" after a final newline, not a line worth showing.
  local last = old and (old[#old] == '' and #old - 1 or #old) or 0
  for i = after, math.min(last, after + context - 1) do
    table.insert(lines, ' ' .. old[i])
  end
  return lines
end

return M
