-- The grid barrier, cuda.cg.this_grid():sync() (numba.cuda's cg.this_grid().sync()), on
-- each device: a kernel that calls it is launched cooperatively (every block resident at
-- once), so a thread reads what threads of other blocks wrote before the barrier. Values
-- are checked against plain Lua; the limit of a cooperative grid, and its error, are
-- pinned; a cpu grid with a failing block ends with that block's error instead of waiting.
local luda = require "luda"
local support = require "support"
local cuda = luda.cuda
local on_devices = support.device_tests(_ENV)

local function error_of(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  return tostring(err)
end

describe("cuda.cg.this_grid():sync()", function()
  on_devices("each thread reads what a thread of the next block wrote before the barrier", function()
    local k = cuda.jit(function(x, mid, out)
      local i = cuda.grid(1)
      local n = #x
      mid[i] = x[i] * 3 + cuda.blockIdx.x
      cuda.cg.this_grid():sync()
      out[i] = mid[(i + cuda.blockDim.x) % n] - x[i]
    end)
    local blocks, threads = math.random(2, 8), 32 * math.random(1, 4)
    local n = blocks * threads
    local xs = {}
    for i = 1, n do xs[i] = math.random(-1000, 1000) end
    local mid, out = luda.zeros(n, "int64"), luda.zeros(n, "int64")
    k[{ blocks, threads }](luda.array(xs, "int64"), mid, out)
    local got = out:totable()
    for i = 0, n - 1 do
      local j = (i + threads) % n
      assert.are.equal(xs[j + 1] * 3 + j // threads - xs[i + 1], got[i + 1])
    end
  end)

  on_devices("numba's sequential_rows: each row reads the previous row's opposite column", function()
    -- g held in a local and synced in a loop, as numba's test of grid sync does.
    local k = cuda.jit(function(m)
      local col = cuda.grid(1)
      local g = cuda.cg.this_grid()
      local rows, cols = m.shape[1], m.shape[2]
      for row = 1, rows - 1 do
        local opposite = cols - col - 1
        m[row][col] = m[row - 1][opposite] + 1
        g:sync()
      end
    end)
    local blocks, threads = math.random(2, 6), 32
    local rows, cols = math.random(20, 60), blocks * threads
    local m = luda.zeros({ rows, cols }, "int32")
    k[{ blocks, threads }](m)
    local got = m:totable()
    for r = 1, rows do
      for c = 1, cols do assert.are.equal(r - 1, got[r][c]) end
    end
  end)

  on_devices("two phases: blocks write partial sums, block 0 combines them after the barrier", function()
    local function grid_barrier() cuda.cg.this_grid():sync() end  -- a device function makes the kernel cooperative
    local k = cuda.jit(function(x, partial, total)
      local s = cuda.shared.array(64, "float64")
      local t, b = cuda.threadIdx.x, cuda.blockIdx.x
      local acc = 0.0
      for i = cuda.grid(1), #x - 1, cuda.gridsize(1) do acc = acc + x[i] end
      s[t] = acc
      cuda.syncthreads()
      local half = 32
      while half > 0 do
        if t < half then s[t] = s[t] + s[t + half] end
        cuda.syncthreads()
        half = half // 2
      end
      if t == 0 then partial[b] = s[0] end
      grid_barrier()
      if b == 0 and t == 0 then
        local sum = 0.0
        for i = 0, cuda.gridDim.x - 1 do sum = sum + partial[i] end
        total[0] = sum
      end
    end)
    local blocks = math.random(2, 8)
    local n = math.random(1000, 5000)
    local xs, want = {}, 0.0
    for i = 1, n do
      xs[i] = math.random(-100000, 100000) / 64  -- exact in float64 in any order of sums
      want = want + xs[i]
    end
    local partial, total = luda.zeros(blocks, "float64"), luda.zeros(1, "float64")
    k[{ blocks, 64 }](luda.array(xs, "float64"), partial, total)
    assert.are.equal(want, total:totable()[1])
    local parts = partial:totable()
    local sum = 0.0
    for i = 1, blocks do sum = sum + parts[i] end
    assert.are.equal(want, sum)
  end)

  on_devices("a grid of max_cooperative_grid_blocks blocks runs; one more is refused with the limit", function(device)
    local k = cuda.jit(function(mid, out)
      local i = cuda.grid(1)
      mid[i] = i
      cuda.cg.this_grid():sync()
      out[i] = mid[(i + cuda.blockDim.x) % #out] + 1
    end)
    local threads = 256
    if device == "cpu" then
      assert.are.equal(64, k:max_cooperative_grid_blocks(threads))
      assert.are.equal(16, k:max_cooperative_grid_blocks(1024))
      assert.are.equal(256, k:max_cooperative_grid_blocks({ 8, 4 }))
      assert.are.equal(256, k:max_cooperative_grid_blocks(1, 4096))
    else
      k:compile("void(int32[:], int32[:])")  -- the limit depends on the compiled kernel
    end
    local most = k:max_cooperative_grid_blocks(threads)
    assert.is_true(most >= 1)
    local n = most * threads
    local mid, out = luda.zeros(n, "int32"), luda.zeros(n, "int32")
    k[{ most, threads }](mid, out)
    local got = out:totable()
    for i = 0, n - 1 do assert.are.equal((i + threads) % n + 1, got[i + 1]) end

    local big = luda.zeros((most + 1) * threads, "int32")
    local err = error_of(function() k[{ most + 1, threads }](big, big) end)
    if device == "cpu" then
      assert.are.equal("kernel 'k': a cooperative grid of 65 blocks of 256 threads is more than the cpu "
        .. "device runs at once: at most 64 blocks of 256 threads (16384 threads and 256 blocks in all); launch at "
        .. "most k:max_cooperative_grid_blocks(256) blocks and loop over the rest of the work (a grid-stride loop)",
        err:match("^.-grid_sync_spec%.lua:%d+: (.*)$"))
    else
      local prefix = ("kernel 'k': a cooperative grid of %d blocks of 256 threads is more than cuda:"):format(most + 1)
      assert.is_truthy(err:find(prefix, 1, true), err)
      assert.is_truthy(err:find((" holds at once: at most %d blocks of 256 threads ("):format(most), 1, true), err)
      assert.is_truthy(err:find("launch at most k:max_cooperative_grid_blocks(256) blocks", 1, true), err)
      k[{ most, threads }](mid, out)  -- the process and the kernel stay usable
    end
  end)
end)

local NEIGHBOURS = [[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void neighbours(const int* x, int* mid, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  mid[i] = x[i] * 3 + blockIdx.x;
  grid.sync();
  out[i] = mid[(i + blockDim.x) % n];
}
]]

describe("raw kernels with enable_cooperative_groups (CuPy's option)", function()
  on_devices("this_grid().sync() in CUDA C++: each thread reads the next block's value", function()
    local k = luda.raw_kernel(NEIGHBOURS, "neighbours", { enable_cooperative_groups = true })
    local threads = 64
    local blocks = math.random(2, math.min(8, k:max_cooperative_grid_blocks(threads)))
    local n = blocks * threads
    local xs = {}
    for i = 1, n do xs[i] = math.random(-1000, 1000) end
    local mid, out = luda.zeros(n, "int32"), luda.zeros(n, "int32")
    k({ blocks }, { threads }, { luda.array(xs, "int32"), mid, out, luda.int32(n) })
    local got = out:totable()
    for i = 0, n - 1 do
      local j = (i + threads) % n
      assert.are.equal(xs[j + 1] * 3 + j // threads, got[i + 1])
    end
  end)

  it("NVRTC compiles the source with <cooperative_groups.h>, without relocatable device code", function()
    local ptx = luda.raw_kernel(NEIGHBOURS, "neighbours", { enable_cooperative_groups = true })
      :inspect("ptx", { arch = "sm_90" })
    assert.is_truthy(ptx:find("%envreg", 1, true))  -- the grid workspace the driver hands a cooperative launch
  end)

  it("the option must be a boolean", function()
    assert.are.equal("raw_kernel: option 'enable_cooperative_groups' must be a boolean, got 1",
      error_of(function() luda.raw_kernel(NEIGHBOURS, "neighbours", { enable_cooperative_groups = 1 }) end)
        :match("^.-grid_sync_spec%.lua:%d+: (.*)$"))
  end)

  it("on cpu, a raw kernel made without it that syncs the grid is told so", function()
    luda.with_device("cpu", function()
      local k = luda.raw_kernel(NEIGHBOURS, "neighbours")
      local x, mid, out = luda.ones(128, "int32"), luda.zeros(128, "int32"), luda.zeros(128, "int32")
      assert.are.equal("raw_kernel 'neighbours' called cooperative_groups::this_grid().sync() but was not "
        .. "launched cooperatively (a raw kernel that uses the grid barrier needs enable_cooperative_groups = true)",
        error_of(function() k({ 2 }, { 64 }, { x, mid, out, luda.int32(128) }) end)
          :match("^.-grid_sync_spec%.lua:%d+: (.*)$"))
      assert.are.equal(256, luda.raw_kernel(NEIGHBOURS, "neighbours"):max_cooperative_grid_blocks(64))
    end)
  end)
end)

describe("cuda.cg.this_grid():sync() on the cpu device", function()
  local function on_cpu(fn) return luda.with_device("cpu", fn) end

  it("a block that fails before the barrier ends the grid with its error; the others stop waiting", function()
    on_cpu(function()
      local k = cuda.jit(function(x, out, bad)
        local i = cuda.grid(1)
        if cuda.blockIdx.x == bad then out[i + 100000] = 1 end
        cuda.cg.this_grid():sync()
        out[i] = x[i]
      end)
      local x, out = luda.ones(4 * 32, "int32"), luda.zeros(4 * 32, "int32")
      local err = error_of(function() k[{ 4, 32 }](x, out, 2) end)
      assert.is_truthy(err:find("kernel 'k' at .-grid_sync_spec.lua:%d+: index 1000%d%d out of range for axis 0 of size 128"), err)
      k[{ 4, 32 }](x, out, -1)  -- the executor stays usable
      for _, v in ipairs(out:totable()) do assert.are.equal(1, v) end
    end)
  end)

  it("blocks that return before the barrier stop counting for it", function()
    on_cpu(function()
      local k = cuda.jit(function(mid, out)
        local i = cuda.grid(1)
        if cuda.blockIdx.x % 2 == 1 then return end
        mid[i] = 1
        cuda.cg.this_grid():sync()
        out[i] = mid[(i + 2 * cuda.blockDim.x) % #out] + 1
      end)
      local mid, out = luda.zeros(6 * 16, "int32"), luda.zeros(6 * 16, "int32")
      k[{ 6, 16 }](mid, out)
      local got = out:totable()
      for i = 0, 6 * 16 - 1 do assert.are.equal((i // 16) % 2 == 0 and 2 or 0, got[i + 1]) end
    end)
  end)
end)
