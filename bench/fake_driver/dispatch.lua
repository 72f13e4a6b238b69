-- Host dispatch per call of each kind of luda kernel, in the loop shape of the GPU
-- benchmarks (1,000 warm-up calls, then 5 samples of `calls` calls with no
-- synchronization; the median). Written for profiling with the fake driver:
--   bench/fake_driver/build.sh
--   LD_LIBRARY_PATH=$PWD/build-fake-driver FAKE_CUDA_LAUNCH_NS=0 build/luda bench/fake_driver/dispatch.lua [what] [calls]
-- what: all (default), or a comma-separated list of raw, raw_hoisted, raw_table, raw_stream, jit, jit_inline,
-- jit_stream, and the kinds as bench/kinds.lua's dispatch section calls them (options tables built once):
-- vectorize, vectorize_stream, elementwise, reduction, fuse.
-- It runs on a real GPU too. The kernels' results are not checked: with the fake driver
-- no kernel runs.
local luda = require "luda"
local cuda = luda.cuda
assert(cuda.is_available(), "needs a CUDA device (or the fake driver: see the top of this file)")

local what = arg and arg[1] or "all"
local calls = tonumber(arg and arg[2]) or 20000

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

-- Calls between synchronizations, untimed, within a sample ($DISPATCH_BATCH; unset: none).
-- Back to back, tiny launches fill the GPU's queue and the host then waits for the GPU:
-- the per-call time becomes the GPU's per-kernel time. Batches shorter than the queue time
-- the host alone (build/bench/launch_floor --batch is the same loop).
local batch = tonumber(os.getenv("DISPATCH_BATCH") or "") or calls

-- Per call: wall time (luda.clock, as the GPU benchmarks) and this process's CPU time
-- (os.clock), which a machine shared with other work disturbs much less.
local function per_call_us(fn)
  for _ = 1, 1000 do fn() end
  cuda.synchronize()
  local wall, cpu = {}, {}
  for r = 1, 5 do
    local w, c = 0, 0
    local done = 0
    while done < calls do
      local n = math.min(batch, calls - done)
      local s, sc = luda.clock(), os.clock()
      for _ = 1, n do fn() end
      w, c = w + (luda.clock() - s), c + (os.clock() - sc)
      done = done + n
      if batch < calls then cuda.synchronize() end
    end
    wall[r] = w / calls * 1e6
    cpu[r] = c / calls * 1e6
    cuda.synchronize()
  end
  return median(wall), median(cpu)
end

local n = 1024
local x, y, z = luda.zeros(n, "float32"), luda.zeros(n, "float32"), luda.zeros(n, "float32")

local cases = {}

-- The raw kernels' source: z = x + y over a grid-stride loop.
local ADD = [[
extern "C" __global__ void add(const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) z[i] = x[i] + y[i];
}]]

cases.raw = function()
  local add = luda.raw_kernel(ADD, "add")
  local args = {x, y, z, n}
  return "raw_kernel add, 4 args, args table reused", per_call_us(function() add({4}, {256}, args) end)
end

cases.raw_hoisted = function()
  local add = luda.raw_kernel(ADD, "add")
  local grid, block, args = {4}, {256}, {x, y, z, n}
  return "raw_kernel add, grid, block and args tables reused (bench/kinds.lua)",
         per_call_us(function() add(grid, block, args) end)
end

cases.raw_table = function()
  local add = luda.raw_kernel(ADD, "add")
  return "raw_kernel add, 4 args, tables built per call (bench/raw_kernel.lua)",
         per_call_us(function() add({4}, {256}, {x, y, z, n}) end)
end

local function jit_add()
  return cuda.jit(function(a, b, out)
    local i = cuda.grid(1)
    if i < #a then out[i] = a[i] + b[i] end
  end)
end

cases.jit = function()
  local launch = jit_add()[{4, 256}]
  return "cuda.jit add, launcher kept", per_call_us(function() launch(x, y, z) end)
end

cases.jit_inline = function()
  local k = jit_add()
  return "cuda.jit add, k[{4, 256}](x, y, z)", per_call_us(function() k[{4, 256}](x, y, z) end)
end

-- The same launches on a stream of their own (read from the launch options at each call).
local stream = luda.stream()

cases.jit_stream = function()
  local launch = jit_add()[{grid = 4, block = 256, stream = stream}]
  return "cuda.jit add, launcher kept, on a stream", per_call_us(function() launch(x, y, z) end)
end

cases.raw_stream = function()
  local add = luda.raw_kernel(ADD, "add")
  local grid, block, args, options = {4}, {256}, {x, y, z, n}, {stream = stream}
  return "raw_kernel add, tables reused, on a stream", per_call_us(function() add(grid, block, args, options) end)
end

-- The kinds: z = x*w+b at n = 1024 with the output given, as bench/kinds.lua.
local b = luda.zeros(n, "float32")
local z0 = luda.empty({}, "float32")
local out_z, out_z0 = {out = z}, {out = z0}

cases.vectorize = function()
  local f = luda.vectorize({"float32(float32, float32, float32)"}, function(p, q, r) return p * q + r end)
  return "vectorize x*w+b, {out = z}", per_call_us(function() f(x, y, b, out_z) end)
end

cases.elementwise = function()
  local k = luda.elementwise("T x, T w, T b", "T z", "z = (x * w) + b", "dnnLayerNode")
  return "elementwise x*w+b, k(x, w, b, z)", per_call_us(function() k(x, y, b, z) end)
end

cases.reduction = function()
  local k = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnnLayer")
  return "reduction dnnLayer, k(x, w, 0.1, {out = z0})", per_call_us(function() k(x, y, 0.1, out_z0) end)
end

cases.vectorize_stream = function()
  local f = luda.vectorize({"float32(float32, float32, float32)"}, function(p, q, r) return p * q + r end)
  local options = {out = z, stream = stream}
  return "vectorize x*w+b, {out = z, stream = s}", per_call_us(function() f(x, y, b, options) end)
end

cases.fuse = function()
  local f = luda.fuse(function(p, q, r) return p * q + r end, {name = "dnnLayerNode"})
  return "fuse x*w+b, {out = z}", per_call_us(function() f(x, y, b, out_z) end)
end

local order = {"raw", "raw_hoisted", "raw_table", "raw_stream", "jit", "jit_inline", "jit_stream", "vectorize",
               "vectorize_stream", "elementwise", "reduction", "fuse"}
print(("device: %s"):format(luda.device(0).name))
local wanted = {}
for name in what:gmatch("[^,]+") do wanted[name] = true end
for _, name in ipairs(order) do
  if wanted.all or wanted[name] then
    local label, wall, cpu = cases[name]()
    print(("%-66s %6.3f us per call (cpu %.3f us)"):format(label, wall, cpu))
  end
end
