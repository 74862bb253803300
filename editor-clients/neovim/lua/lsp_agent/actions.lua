--- Building prompts: typed text with @-mentions, a visual selection, diagnostics to fix.
---
--- Resources always carry the *buffer* text (unsaved changes included), as ContentBlocks
--- `{type = "resource", resource = {uri, text, mimeType?}, _meta = {range?}}`; ranges are in
--- the client's negotiated position encoding.
local diagnostics = require('lsp_agent.diagnostics')

local M = {}

--- Whole text of a buffer as it would be written (final newline per 'eol'/'fixeol').
--- @param bufnr integer
--- @return string
function M.buffer_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = table.concat(lines, '\n')
  if vim.bo[bufnr].eol or vim.bo[bufnr].fixeol then
    text = text .. '\n'
  end
  return text
end

--- A resource block for (part of) a buffer.
--- @param bufnr integer
--- @param text string
--- @param range table|nil LSP range
function M.resource(bufnr, text, range)
  local block = {
    type = 'resource',
    resource = { uri = vim.uri_from_bufnr(bufnr), text = text },
  }
  local ft = vim.bo[bufnr].filetype
  if ft ~= '' then
    block.resource.mimeType = 'text/x-' .. ft
  end
  if range then
    block._meta = { range = range }
  end
  return block
end

--- Display label of a buffer path relative to `root` (or ~).
function M.label(bufnr, root)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if root and name:sub(1, #root + 1) == root .. '/' then
    return name:sub(#root + 2)
  end
  return vim.fn.fnamemodify(name, ':~:.')
end

--- Find @-mentions of files in typed text: "@src/a.py", "@./x", "@/abs/path".
--- Only mentions that name an existing file (relative to `root`) or a loaded buffer count.
--- @param text string
--- @param root string
--- @return { path: string, label: string }[]
function M.mentions(text, root)
  local out, seen = {}, {}
  for token in (' ' .. text):gmatch('%s@([%w%._%-/~+]+)') do
    token = token:gsub('[%.,;:]$', '')
    local path = vim.fs.normalize(token)
    if not path:match('^/') then
      path = vim.fs.normalize(root .. '/' .. path)
    end
    if not seen[path] and (vim.fn.filereadable(path) == 1 or vim.fn.bufloaded(path) == 1) then
      seen[path] = true
      table.insert(out, { path = path, label = token })
    end
  end
  return out
end

--- Content blocks for typed text: the text, then one resource per @-mention (buffer text when
--- the file is loaded, else the file read from disk).
--- @return table[] blocks, string[] attachment labels
function M.text_blocks(text, root)
  local blocks = { { type = 'text', text = text } }
  local labels = {}
  for _, mention in ipairs(M.mentions(text, root)) do
    local bufnr = vim.fn.bufnr(mention.path)
    if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
      table.insert(blocks, M.resource(bufnr, M.buffer_text(bufnr)))
    else
      local fd = io.open(mention.path, 'rb')
      if fd then
        local content = fd:read('*a')
        fd:close()
        table.insert(blocks, {
          type = 'resource',
          resource = { uri = vim.uri_from_fname(mention.path), text = content },
        })
      end
    end
    table.insert(labels, mention.label)
  end
  -- "@server:uri" names an MCP resource: the server attaches its contents, the chat shows it.
  for mention in (' ' .. text):gmatch('%s@([%w_%.%-]+:[^%s/\\][^%s]*)') do
    table.insert(labels, (mention:gsub('[%.,;]$', '')))
  end
  return blocks, labels
end

--- The selection of a range command as (text, LSP range).
--- @param bufnr integer
--- @param line1 integer 1-based first line
--- @param line2 integer 1-based last line
--- @param encoding string position encoding
--- @param charwise { start_col: integer, end_col: integer }|nil byte columns (0-based start,
---   0-based inclusive end) of a characterwise visual selection
--- @return string text, table range
function M.selection(bufnr, line1, line2, encoding, charwise)
  local lines = vim.api.nvim_buf_get_lines(bufnr, line1 - 1, line2, false)
  if charwise and #lines > 0 then
    local last = lines[#lines]
    -- The end column is inclusive and may sit on the first byte of a multibyte character.
    local end_byte = charwise.end_col + 1
    if end_byte <= #last then
      local char_end = vim.str_utf_end(last, end_byte)
      end_byte = end_byte + char_end
    end
    end_byte = math.min(end_byte, #last)
    lines[#lines] = last:sub(1, end_byte)
    lines[1] = lines[1]:sub(charwise.start_col + 1)
    local first_line = vim.api.nvim_buf_get_lines(bufnr, line1 - 1, line1, false)[1] or ''
    return table.concat(lines, '\n'), {
      start = {
        line = line1 - 1,
        character = diagnostics.character(first_line, charwise.start_col, encoding),
      },
      ['end'] = { line = line2 - 1, character = diagnostics.character(last, end_byte, encoding) },
    }
  end
  local text = table.concat(lines, '\n') .. '\n'
  return text, {
    start = { line = line1 - 1, character = 0 },
    ['end'] = { line = line2, character = 0 },
  }
end

local SEVERITY = { 'Error', 'Warning', 'Info', 'Hint' }

--- The diagnostics under the cursor (cursor line; those covering the cursor column first).
--- @return vim.Diagnostic[]
function M.diagnostics_at_cursor(bufnr, row, col)
  local items = vim.diagnostic.get(bufnr, { lnum = row })
  local covering, others = {}, {}
  for _, d in ipairs(items) do
    local end_col = (d.end_lnum or d.lnum) > row and math.huge or (d.end_col or d.col)
    if d.col <= col and col <= math.max(end_col, d.col) then
      table.insert(covering, d)
    else
      table.insert(others, d)
    end
  end
  return vim.list_extend(covering, others)
end

--- The fallback prompt of :AgentFix: the diagnostics as text plus the buffer as a resource.
--- @return table[] blocks, string display text
function M.fix_blocks(bufnr, items, root)
  local label = M.label(bufnr, root)
  local lines = { ('Fix these diagnostics in %s:'):format(label) }
  for _, d in ipairs(items) do
    local where = ('%d:%d'):format(d.lnum + 1, d.col + 1)
    local extra = {}
    if d.source then
      table.insert(extra, d.source)
    end
    if d.code then
      table.insert(extra, tostring(d.code))
    end
    table.insert(lines, ('- %s %s: %s%s'):format(SEVERITY[d.severity] or 'Problem', where,
      d.message, #extra > 0 and (' (' .. table.concat(extra, ' ') .. ')') or ''))
  end
  table.insert(lines, 'Keep the fix minimal and do not change unrelated code.')
  local text = table.concat(lines, '\n')
  -- The whole buffer, without a range: a range would mark the text as an excerpt of the file.
  return { { type = 'text', text = text }, M.resource(bufnr, M.buffer_text(bufnr)) }, text
end

return M
