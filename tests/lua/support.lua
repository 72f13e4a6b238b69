-- What the busted specs share: references, random inputs, error capture, devices, and
-- running the luda binary. Specs load it with `require "support"` (ctest passes --lpath).
local M = {}

-- float32 rounding of a Lua number, computed by string.pack (an independent reference).
function M.f32(x) return (string.unpack("f", string.pack("f", x))) end

-- A nested table of `shape` (a Lua sequence) filled by gen().
function M.random_table(shape, gen, depth)
  depth = depth or 1
  local t = {}
  for i = 1, shape[depth] do
    if depth == #shape then t[i] = gen() else t[i] = M.random_table(shape, gen, depth + 1) end
  end
  return t
end

-- "file:line: " of the line that calls here() (or `level` callers further up): what a
-- luda error raised from that line starts with.
function M.here(level)
  local info = debug.getinfo((level or 1) + 1, "Sl")
  return info.short_src .. ":" .. info.currentline .. ": "
end

-- The error f raises; an error of its own when f raises none. (Plain Lua: busted's
-- assert and pending live in the specs' environments, not in modules they require.)
function M.error_of(f)
  local ok, err = pcall(f)
  if ok then error("expected an error, but the call succeeded", 2) end
  return err
end

-- Why a test needing `need` (default 1) CUDA devices cannot run here, or nil when it can.
-- Specs wrap it: `if why then pending(why) else body() end`, so a run without a GPU shows
-- why it skipped.
-- The note luda writes on stderr, once, the first time a script needs the default device
-- on a machine with no usable CUDA device ("" where there is one).
function M.cpu_note()
  local luda = require "luda"
  local gpu, why = luda.cuda.is_available()
  if gpu then return "" end
  return "luda: no CUDA device, running on the cpu device (LUDA_DEVICE=cpu chooses it without this note): " .. why .. "\n"
end

function M.gpu_missing(need)
  local luda = require "luda"
  local gpu, why = luda.cuda.is_available()
  if not gpu then return "no CUDA device: " .. why end
  local have = luda.cuda.device_count()
  if (need or 1) > have then return ("needs %d CUDA devices, this machine has %d"):format(need, have) end
  return nil
end

-- Every device a behaviour test is written for: the cpu target, and cuda (= cuda:0).
M.TARGETS = { "cpu", "cuda" }

-- Why a test cannot run on `device` here, or nil when it can: the cpu target runs
-- everywhere; cuda needs a usable CUDA device.
function M.device_missing(device)
  if device == "cpu" then return nil end
  return M.gpu_missing()
end

-- The name of the device that arrays, streams and events made under with_device(device)
-- report: "cpu" or "cuda:0".
function M.device_name(device) return device == "cpu" and "cpu" or "cuda:0" end

-- For a test that needs a GPU (and the cpu beside it): `env` is the spec's _ENV, where
-- busted's pending lives. The result wraps a body, which then runs where a GPU is usable
-- and is pending with why elsewhere: `it("...", needs_gpu(function() ... end))`.
function M.gpu_test(env)
  return function(body)
    return function()
      local why = M.gpu_missing()
      if why then return env.pending(why) end
      body()
    end
  end
end

-- The devices behaviour tests run on here: "cpu" always, then "cuda" when one is usable.
function M.devices()
  local list = {}
  for _, device in ipairs(M.TARGETS) do
    if not M.device_missing(device) then list[#list + 1] = device end
  end
  return list
end

-- One test source per behaviour, run on each device (Warp's add_function_test(...,
-- devices=)). `env` is the spec's _ENV, where busted's `it` and `pending` live (looked up
-- when used: busted's pending differs inside a test). The result, on_devices(name, body),
-- registers "name [cpu]" and "name [cuda]"; each runs body(device) with `device` as the
-- thread's current device, so the arrays luda makes there are on it and the kernels that
-- take them run on it, or is pending with why the device is missing here.
function M.device_tests(env)
  return function(name, body)
    for _, device in ipairs(M.TARGETS) do
      env.it(name .. " [" .. device .. "]", function()
        local why = M.device_missing(device)
        if why then return env.pending(why) end
        require("luda").with_device(device, body, device)
      end)
    end
  end
end

function M.quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

function M.write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function M.read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

-- The luda binary under test (ctest sets LUDA_BIN).
M.LUDA = os.getenv("LUDA_BIN")

-- Runs `luda <args>` with `stdin` (a string) as its input; returns stdout, stderr and the
-- exit status. `merged` sends stderr into stdout (to check the order of the two). `env`
-- is a table of environment variables for the run ({LUDA_DEVICE = "cpu"}). `seconds`, when
-- given, kills a run that takes longer (exit status 137): a test of a hang fails instead
-- of hanging the suite. `cwd`, when given, is the folder it runs in.
function M.run_luda(args, stdin, merged, env, seconds, cwd)
  assert(M.LUDA, "set LUDA_BIN to the luda binary (ctest does)")
  local out, err, inp = os.tmpname(), os.tmpname(), os.tmpname()
  M.write_file(inp, stdin or "")
  local redirect = merged and (" >" .. out .. " 2>&1") or (" >" .. out .. " 2>" .. err)
  local vars = {}
  for k, v in pairs(env or {}) do vars[#vars + 1] = k .. "=" .. M.quote(v) .. " " end
  table.sort(vars)
  local limit = seconds and ("timeout -s KILL " .. seconds .. " ") or ""
  local dir = cwd and ("cd " .. M.quote(cwd) .. " && ") or ""
  local _, _, code = os.execute(dir .. table.concat(vars) .. limit .. M.quote(M.LUDA) .. " " .. args .. " <" .. inp .. redirect)
  local o, e = M.read_file(out), merged and "" or M.read_file(err)
  os.remove(out); os.remove(err); os.remove(inp)
  return o, e, code
end

-- Asserts (busted's assert) that array `got` equals `want`: shape, dtype, and values on
-- want's device (NaN equal to NaN; float and complex values within `rtol` of want, and
-- `atol` besides where a sum's terms cancel, both default 0: exact).
function M.assert_array_equal(got, want, what, rtol, atol)
  local assert = require "luassert"
  if got.device ~= want.device then got = got:to(want.device) end
  assert.are.same(want.shape, got.shape, what)
  assert.are.equal(want.dtype, got.dtype, what)
  if want.size == 0 then return end
  local luda = require "luda"
  if want.dtype:find("float") or want.dtype:find("complex") then
    assert.is_true(luda.allclose(got, want, { rtol = rtol or 0, atol = atol or 0, equal_nan = true }), what)
  else
    assert.is_true(luda.all(luda.equal(got, want)):item(), what)
  end
end

-- Random chunks for `shape`, as luda.chunked takes them: per axis a block size, -1 (the
-- whole axis), or a list of uneven extents adding up to it (an empty axis: a block size).
function M.random_chunks(shape)
  local c = {}
  for a, n in ipairs(shape) do
    local kind = math.random(1, 3)
    if kind == 1 or n == 0 then c[a] = math.random(1, math.max(n, 1))
    elseif kind == 2 then c[a] = -1
    else
      local list, left = {}, n
      while left > 0 do
        local e = math.random(1, left)
        list[#list + 1] = e
        left = left - e
      end
      c[a] = list
    end
  end
  return c
end

return M
