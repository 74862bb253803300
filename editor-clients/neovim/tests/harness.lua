--- A tiny test harness for `nvim -l`: plain asserts, TAP-like output, exit code = failures > 0.
---
--- Usage in a spec file:
---   local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/../harness.lua')
---   H.test('name', function() H.eq(actual, expected) end)
---   H.finish()
--- Loading the harness puts the plugin (two directories up) first on 'runtimepath'.
local H = { passed = 0, failed = 0, names = {} }

local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2),
  ':p')))
H.plugin_root = vim.fs.dirname(here)
H.tests_dir = here
vim.opt.runtimepath:prepend(H.plugin_root)

local function out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

--- Run one test; an error (from an assert or anything else) fails it and the run goes on.
function H.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    H.passed = H.passed + 1
    out('ok - ' .. name)
  else
    H.failed = H.failed + 1
    out('not ok - ' .. name)
    for _, line in ipairs(vim.split(tostring(err), '\n', { plain = true })) do
      out('#   ' .. line)
    end
  end
end

--- Fail unless `actual` deep-equals `expected`.
function H.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(('%sexpected: %s\n  actual: %s'):format(what and (what .. '\n') or '',
      vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

--- Fail unless `value` is truthy.
function H.ok(value, what)
  if not value then
    error(what or 'expected a truthy value', 2)
  end
  return value
end

--- Fail unless `fn` raises an error whose message contains `fragment`.
function H.raises(fn, fragment)
  local ok, err = pcall(fn)
  if ok then
    error('expected an error containing ' .. vim.inspect(fragment), 2)
  end
  if fragment and not tostring(err):find(fragment, 1, true) then
    error(('error %q does not contain %q'):format(tostring(err), fragment), 2)
  end
end

--- Run the event loop until `cond()` is truthy; fail after `timeout_ms`.
--- The timeout only bounds a hung run; it is not a timing assertion.
function H.wait(timeout_ms, cond, what)
  local ok = vim.wait(timeout_ms, cond, 20)
  if not ok then
    error('timed out waiting for ' .. (what or 'condition'), 2)
  end
end

--- Print the summary and exit (status 1 when a test failed or none ran).
function H.finish()
  out(('# %d passed, %d failed'):format(H.passed, H.failed))
  local code = (H.failed == 0 and H.passed > 0) and 0 or 1
  io.stdout:flush()
  os.exit(code)
end

return H
