-- What the cpu device's guards cost: bounds checks (on by default there) and the stop
-- polls at loop back-edges, on the kernels of bench/cpu.lua and one with a hot inner loop.
-- Run it with a build with and without the feature to compare; LUDA_BOUNDSCHECK=0 or 1
-- turns checks off or on:
--   LUDA_BOUNDSCHECK=0 build/luda bench/cpu_guards.lua; LUDA_BOUNDSCHECK=1 build/luda bench/cpu_guards.lua
-- Times are the best of a few runs after a first call that compiles. Prints a Markdown table.
local luda = require "luda"
local cuda = luda.cuda

local N = math.tointeger(tonumber(arg and arg[1])) or 4 * 1024 * 1024
local REPS = 7
local CPU = { device = "cpu" }

local function best_of(reps, fn)
  local best = math.huge
  for _ = 1, reps do
    local t0 = luda.clock()
    fn()
    best = math.min(best, luda.clock() - t0)
  end
  return best
end

local layer = cuda.jit(function(x, w, b, z)
  local i = cuda.grid(1)
  if i < #x then z[i] = x[i] * w[i] + b[i] end
end)
local layer_stride = cuda.jit(function(x, w, b, z)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do z[i] = x[i] * w[i] + b[i] end
end)
-- One row of a matrix-vector product per thread: an inner loop of loads and a multiply-add.
local matvec = cuda.jit(function(a, v, out)
  local i = cuda.grid(1)
  if i < a.shape[1] then
    local s = 0.0
    for k = 0, a.shape[2] - 1 do s = s + a[i][k] * v[k] end
    out[i] = s
  end
end)
local TILE = 32
local transpose_tiled = cuda.jit(function(a, out)
  local tile = cuda.shared.array({ TILE, TILE + 1 }, "int32")
  local tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
  local x = cuda.blockIdx.x * TILE + tx
  local y = cuda.blockIdx.y * TILE + ty
  if y < a.shape[1] and x < a.shape[2] then tile[ty][tx] = a[y][x] end
  cuda.syncthreads()
  x = cuda.blockIdx.y * TILE + tx
  y = cuda.blockIdx.x * TILE + ty
  if y < out.shape[1] and x < out.shape[2] then out[y][x] = tile[tx][ty] end
end)

local x = luda.random.random(N, "float32", { seed = 1, device = "cpu" })
local w = luda.random.random(N, "float32", { seed = 2, device = "cpu" })
local b = luda.random.random(N, "float32", { seed = 3, device = "cpu" })
local z = luda.zeros(N, "float32", CPU)
local M = 2048
local a = luda.random.random({ M, M }, "float64", { seed = 4, device = "cpu" })
local v = luda.random.random(M, "float64", { seed = 5, device = "cpu" })
local mv = luda.zeros(M, "float64", CPU)
local T = 1024
local ti = luda.arange(T * T, "int32", CPU):reshape(T, T)
local tt = luda.zeros({ T, T }, "int32", CPU)

local cases = {
  { ("z = x * w + b, one thread per element, %d float32"):format(N), function() layer[{ N // 256, 256 }](x, w, b, z) end },
  { "the same, grid-stride loop {64, 256}", function() layer_stride[{ 64, 256 }](x, w, b, z) end },
  { ("matrix-vector product %dx%d float64, a row per thread"):format(M, M), function() matvec[{ M // 64, 64 }](a, v, mv) end },
  { ("tiled %dx%d int32 transpose with syncthreads (fibers)"):format(T, T),
    function() transpose_tiled[{ grid = { T // TILE, T // TILE }, block = { TILE, TILE } }](ti, tt) end },
}
print(("LUDA_BOUNDSCHECK=%s, %s threads"):format(os.getenv("LUDA_BOUNDSCHECK") or "(unset)", os.getenv("LUDA_CPU_THREADS") or "all"))
print("| kernel on cpu | best of " .. REPS .. " |")
print("| --- | --- |")
for _, c in ipairs(cases) do
  c[2]()  -- compiles
  print(("| %s | %.2f ms |"):format(c[1], best_of(REPS, c[2]) * 1e3))
end
