-- Numba's add_kernel in luda: a grid-stride loop, so that a fixed grid of 30 blocks of
-- 128 threads covers 100000 elements whatever their number. Checked against plain Lua.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/add_kernel.lua
local luda = require "luda"
local cuda = luda.cuda

-- Each thread starts at its global index and strides by the number of threads in the
-- grid. Element indices are 0-based, so the last one is #x - 1 (Lua's for includes it).
local add_kernel = cuda.jit(function(x, y, out)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do
    out[i] = x[i] + y[i]
  end
end)

local n = 100000
local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
local xs, ys = {}, {}
for i = 1, n do
  xs[i] = f32(math.random() * 2000 - 1000)
  ys[i] = f32(math.random() * 2000 - 1000)
end
local x, y = luda.array(xs, "float32"), luda.array(ys, "float32")
local out = luda.empty(x.shape, x.dtype)   -- uninitialized, on x's device

add_kernel[{30, 128}](x, y, out)   -- 30 blocks of 128 threads: 3840 threads, 27 strides
print(("add_kernel[{30, 128}] over %d elements:"):format(n))
print(out)

-- A float32 sum is correctly rounded, so rounding the float64 sum of the same float32
-- inputs gives exactly the device's result.
local result = out:totable()
for i = 1, n do
  local expected = f32(xs[i] + ys[i])
  if result[i] ~= expected then
    error(("add_kernel: out[%d] = %.9g, plain Lua gives %.9g"):format(i - 1, result[i], expected))
  end
end
print(("add_kernel matches plain Lua on all %d elements"):format(n))
