-- The cpu target's promise for integer data: examples/transpose.lua (a tiled transpose with
-- cuda.syncthreads) and examples/block_sum.lua (warp shuffles, dynamic shared memory)
-- give bit-identical results on the cpu target and on a GPU. Each example runs here as a
-- chunk, once per device with the same seed, under luda.with_device; it checks itself
-- against plain Lua and returns its result arrays, which are then compared exactly. The
-- cpu run happens everywhere; the comparison is pending, with the reason, without a GPU.
local luda = require "luda"
local support = require "support"
local SOURCE = os.getenv("LUDA_SOURCE_DIR") or "."

-- Runs examples/<name> on `device` with math.random seeded by `seed` and the script
-- arguments `args`; returns the host tables of its results and the lines it printed.
local function run(name, device, seed, args)
  local printed = {}
  local env = setmetatable({
    arg = args,
    print = function(...)
      local parts = table.pack(...)
      for i = 1, parts.n do parts[i] = tostring(parts[i]) end
      printed[#printed + 1] = table.concat(parts, "\t", 1, parts.n)
    end,
  }, { __index = _G })
  local chunk = assert(loadfile(SOURCE .. "/examples/" .. name, "t", env))
  math.randomseed(seed)
  local results = table.pack(luda.with_device(device, chunk))
  local tables = {}
  for i = 1, results.n do
    assert.are.equal(device == "cuda" and "cuda:0" or "cpu", results[i].device)
    tables[i] = results[i]:totable()
  end
  return tables, printed
end

-- Each example with its arguments and the lines it prints when it matches plain Lua.
local CASES = {
  { "transpose.lua", { "300", "517" }, {
      "naive transpose of a 300x517 int32 array matches the host transpose",
      "tiled transpose of a 300x517 int32 array matches the host transpose" } },
  { "block_sum.lua", {}, {
      "^block_sum: 3907 blocks of 256 int32 values match the host sums %(total %-?%d+%)$" } },
}

describe("cpu and cuda give bit-identical results for integer data", function()
  for _, case in ipairs(CASES) do
    local name, args, lines = case[1], case[2], case[3]
    it(name, function()
      local seed = math.random(1, 1 << 30)
      local on_cpu, cpu_printed = run(name, "cpu", seed, args)
      for i, pattern in ipairs(lines) do assert.truthy((cpu_printed[i] or ""):find(pattern), cpu_printed[i]) end
      local why = support.device_missing("cuda")
      if why then return pending(why) end
      local on_gpu, gpu_printed = run(name, "cuda", seed, args)
      for i, pattern in ipairs(lines) do assert.truthy((gpu_printed[i] or ""):find(pattern), gpu_printed[i]) end
      assert.are.equal(#on_cpu, #on_gpu)
      for i = 1, #on_cpu do assert.are.same(on_cpu[i], on_gpu[i]) end
    end)
  end
end)
