-- Linear algebra on one device (bench/linalg.sh runs it beside CuPy and NumPy):
--   matmul of two n x n float32 matrices (n = 8192 on a GPU), in TFLOP/s;
--   dot of two 2048 x 2048 float32 matrices, the CuPy guide's timing, on this device and on
--   the cpu (OpenBLAS);
--   the host's cost of a linear-algebra call: matmul of two 16 x 16 matrices back to back.
-- Prints one line per figure and "@@ key value" lines for scripts.
--   build/luda bench/linalg.lua [--smoke]      (--smoke: small sizes, any device)
local luda = require "luda"

local smoke = arg and arg[1] == "--smoke"
local dev = luda.current_device()
local on_gpu = dev.kind ~= "cpu"

local function wait(on) if on ~= "cpu" and on_gpu then luda.cuda.synchronize() end end

-- Median milliseconds of `reps` runs of fn, each waited for.
local function time(fn, reps, on)
  fn()
  wait(on)
  local t = {}
  for k = 1, reps do
    local t0 = luda.clock()
    fn()
    wait(on)
    t[k] = (luda.clock() - t0) * 1e3
  end
  table.sort(t)
  return t[(reps + 1) // 2]
end

local n = smoke and 256 or (on_gpu and 8192 or 2048)
local a = luda.random.random({ n, n }):astype("float32")
local b = luda.random.random({ n, n }):astype("float32")
local c = luda.empty({ n, n }, "float32")
local ms = time(function() luda.matmul(a, b, { out = c }) end, smoke and 3 or 10)
-- A few elements against row-times-column sums of luda's own kernels.
for _, at in ipairs({ { 0, 0 }, { n - 1, n // 3 }, { n // 2, n - 1 } }) do
  local i, j = at[1], at[2]
  local row, col = a:slice(("%d:%d, :"):format(i, i + 1)), b:slice((":, %d:%d"):format(j, j + 1)):transpose()
  local want = (row:astype("float64") * col:astype("float64")):sum():item()
  local got = c:slice(("%d:%d, %d:%d"):format(i, i + 1, j, j + 1)):sum():item()
  assert(math.abs(got - want) <= n * 2 ^ -22 * math.abs(want), ("matmul element (%d, %d) is %g, expected %g"):format(i, j, got, want))
end
local tflops = 2 * n ^ 3 / (ms * 1e-3) / 1e12
print(("matmul %d x %d float32 on %s: %.3f ms, %.1f TFLOP/s"):format(n, n, dev.name, ms, tflops))
print(("@@ matmul_f32_%d_ms %.4f\n@@ matmul_f32_%d_tflops %.3f"):format(n, ms, n, tflops))

local m = smoke and 128 or 2048
for _, where in ipairs(on_gpu and { "gpu", "cpu" } or { "cpu" }) do
  local x = luda.random.random({ m, m }):astype("float32")
  local y = luda.random.random({ m, m }):astype("float32")
  if where == "cpu" then x, y = x:to("cpu"), y:to("cpu") end
  local t = time(function() luda.dot(x, y) end, smoke and 3 or 10, where)
  print(("dot %d x %d float32 on %s: %.3f ms"):format(m, m, where, t))
  print(("@@ dot_f32_%d_%s_ms %.4f"):format(m, where, t))
end

-- The cost of a call: 2000 small products, waited for once.
local s = 16
local p, q, r = luda.ones({ s, s }, "float32"), luda.ones({ s, s }, "float32"), luda.empty({ s, s }, "float32")
local calls = smoke and 100 or 2000
local per = time(function() for _ = 1, calls do luda.matmul(p, q, { out = r }) end end, 5) / calls * 1e3
print(("matmul %d x %d, %d calls back to back: %.2f us a call"):format(s, s, calls, per))
print(("@@ matmul_small_us %.3f"):format(per))
