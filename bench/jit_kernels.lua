-- cuda.jit kernels on a GPU, against a device-to-device copy measured in the same run:
-- the grid-stride add of 64Mi float32 and the shared-memory tiled transpose of an
-- 8192x8192 int32 array; the compile time of a new kernel against NVRTC's own time for
-- its source; and a second process finding the kernel in the disk cache.
--   LUDA_CACHE_DIR=$(mktemp -d) build/luda bench/jit_kernels.lua
local luda = require "luda"
local cuda = luda.cuda
assert(cuda.is_available(), "needs a CUDA device")

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

-- GPU milliseconds of fn: median of `reps` CUDA-event timed runs after a warm-up.
local function gpu_ms(fn, reps)
  fn(); cuda.synchronize()
  local times = {}
  for r = 1, reps or 20 do
    local a, b = luda.event(), luda.event()
    a:record(); fn(); b:record(); b:synchronize()
    times[r] = a:elapsed_time(b)
  end
  return median(times)
end

local function tbs(bytes, ms) return bytes / (ms * 1e-3) / 1e12 end

local sms = luda.device(0).multiprocessors
print(("device: %s, %d SMs"):format(luda.device(0).name, sms))

-- Warm the process: context, allocator, and NVRTC's own first-use cost (106 ms in the
-- anchors), so the compile figure below is that of a new kernel in a warm process.
local warm = cuda.jit(function(x) x[0] = 1 end)
warm[{1, 1}](luda.zeros(1, "float32"))
cuda.synchronize()

-- 1. The grid-stride add (Numba's add_kernel), 64Mi float32.
local add_kernel = cuda.jit(function(x, y, out)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do
    out[i] = x[i] + y[i]
  end
end)
local n = 64 * 1024 * 1024
local x, y, out = luda.empty(n, "float32"), luda.empty(n, "float32"), luda.empty(n, "float32")
luda.copyto(x, 1.25); luda.copyto(y, -0.5)
local t0 = luda.clock()
add_kernel[{sms * 8, 256}](x, y, out)
cuda.synchronize()
local first_ms = (luda.clock() - t0) * 1e3
local st = add_kernel:stats()
assert(out[n - 1] == 0.75 and out[0] == 0.75, "add_kernel gave a wrong result")

local copy_f32_ms = gpu_ms(function() luda.copyto(out, x) end)
local best_add, best_cfg = math.huge, nil
-- Numba's users pick the launch shape; so does this bench, from a few usual ones.
local shapes = {{sms * 4, 256}, {sms * 8, 256}, {sms * 16, 256}, {sms * 32, 256}, {sms * 4, 512},
                {sms * 8, 512}, {sms * 2, 1024}, {sms * 4, 1024}, {n // 256, 256}, {n // 1024, 1024}}
for _, cfg in ipairs(shapes) do
  local ms = gpu_ms(function() add_kernel[cfg](x, y, out) end)
  if ms < best_add then best_add, best_cfg = ms, cfg end
end
local copy_bw, add_bw = tbs(8 * n, copy_f32_ms), tbs(12 * n, best_add)
print(("copy 256 MiB: %.1f us = %.2f TB/s"):format(copy_f32_ms * 1e3, copy_bw))
print(("grid-stride add 64Mi float32, grid %d x block %d: %.1f us = %.2f TB/s = %.3f of copy")
      :format(best_cfg[1], best_cfg[2], best_add * 1e3, add_bw, add_bw / copy_bw))
print(("first launch of add_kernel: %.2f ms; NVRTC alone for its source: %.2f ms (ratio %.2f); front end %.2f ms, load %.2f ms")
      :format(first_ms, st.compile_seconds * 1e3, first_ms / (st.compile_seconds * 1e3),
              st.frontend_seconds * 1e3, st.load_seconds * 1e3))
x, y, out = nil, nil, nil
collectgarbage()

-- 2. The tiled transpose with a 32x33 shared tile, 8192x8192 int32.
local TILE, ROWS = 32, 8
local transpose = cuda.jit(function(a, b)
  local tile = cuda.shared.array({TILE, TILE + 1}, "int32")
  local tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
  local bx, by = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
  local rows, cols = a.shape[1], a.shape[2]
  for k = 0, TILE - 1, ROWS do
    local r, c = by + ty + k, bx + tx
    if r < rows and c < cols then tile[ty + k][tx] = a[r][c] end
  end
  cuda.syncthreads()
  for k = 0, TILE - 1, ROWS do
    local r, c = bx + ty + k, by + tx
    if r < cols and c < rows then b[r][c] = tile[tx][ty + k] end
  end
end)
local m = 8192
local a = luda.arange(m * m, "int32"):reshape(m, m)
local b = luda.empty({m, m}, "int32")
local cfg = {grid = {m // TILE, m // TILE}, block = {TILE, ROWS}}
transpose[cfg](a, b)
cuda.synchronize()
for _, p in ipairs({{0, 1}, {1, 0}, {4095, 77}, {8191, 8190}}) do
  assert(b[p[1]][p[2]] == p[2] * m + p[1], "transpose gave a wrong result")
end
local copy_i32_ms = gpu_ms(function() luda.copyto(b, a) end)
local tr_ms = gpu_ms(function() transpose[cfg](a, b) end)
local copy2_bw, tr_bw = tbs(8 * m * m, copy_i32_ms), tbs(8 * m * m, tr_ms)
print(("copy 8192x8192 int32: %.1f us = %.2f TB/s"):format(copy_i32_ms * 1e3, copy2_bw))
print(("tiled transpose 8192x8192 int32 (32x33 tile, block 32x8): %.1f us = %.2f TB/s = %.3f of copy")
      :format(tr_ms * 1e3, tr_bw, tr_bw / copy2_bw))

-- 3. A second process: a kernel compiled by one process found in the disk cache by the
-- next one running the same file (a kernel's code names its file in #line directives).
local script = os.tmpname() .. ".lua"
local f = assert(io.open(script, "w"))
f:write([[
local luda = require "luda"
local cuda = luda.cuda
local x = luda.zeros(1024, "float32")   -- context and allocator up before the clock starts
cuda.synchronize()
local scale_add = cuda.jit(function(x, y, out)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do
    out[i] = 2 * x[i] + y[i]
  end
end)
local t0 = luda.clock()
scale_add[{4, 256}](x, x, x)
local ms = (luda.clock() - t0) * 1e3
cuda.synchronize()
local s = scale_add:stats()
print(("%s process: first call of a kernel returned after %.2f ms (disk hits %d, NVRTC compiles %d)")
      :format(arg[1], ms, s.disk_hits, s.nvrtc_compiles))
]])
f:close()
local exe = arg and arg[-1] or "build/luda"
os.execute(exe .. " " .. script .. " first")
os.execute(exe .. " " .. script .. " second")
os.remove(script)
