-- Numba's first CUDA tutorial function, hypot, in luda: one scalar Lua function run as
-- plain Lua on the host and, unchanged, as a device function that a kernel calls. The
-- kernel's results on random float32 arrays are checked against plain Lua.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/hypot.lua
local luda = require "luda"
local cuda = luda.cuda

-- The hypotenuse without overflowing the squares. A plain Lua function: call it on the
-- host as it is; a kernel that calls it gets it as a device function, typed for its
-- arguments (float32 here, so the device code stays in float32).
local function hypot(x, y)
  x, y = math.abs(x), math.abs(y)
  local t = math.min(x, y)
  x = math.max(x, y)
  t = t / x
  return x * math.sqrt(1 + t * t)
end

print(("plain Lua: hypot(3.0, 4.0) = %.1f"):format(hypot(3.0, 4.0)))

-- One thread per element; `hypot` is an upvalue, so it becomes a device function.
local hypot_kernel = cuda.jit(function(x, y, out)
  local i = cuda.grid(1)
  if i < #out then
    out[i] = hypot(x[i], y[i])
  end
end)
assert(type(hypot_kernel.lua) == "function", "k.lua is the Lua function given to cuda.jit")

-- Random float32 inputs (never zero, where hypot would divide 0 by 0).
local n = 100000
local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
local xs, ys = {}, {}
for i = 1, n do
  xs[i] = f32((math.random() - 0.5) * 200 + 1e-3)
  ys[i] = f32((math.random() - 0.5) * 200 + 1e-3)
end
local x, y = luda.array(xs, "float32"), luda.array(ys, "float32")
local out = luda.empty(n, "float32")

local threads = 128
hypot_kernel[{(n + threads - 1) // threads, threads}](x, y, out)

-- The same function as plain Lua (float64) on the same inputs; float32 on the device
-- rounds five times, so allow a few float32 ulps (one ulp is at most 1.2e-7 relative).
local result, worst = out:totable(), 0
for i = 1, n do
  local expected = hypot(xs[i], ys[i])
  local err = math.abs(result[i] - expected) / expected
  if err > 1e-6 then
    error(("hypot: out[%d] = %.9g, plain Lua gives %.9g for x = %.9g, y = %.9g"):format(
      i - 1, result[i], expected, xs[i], ys[i]))
  end
  worst = math.max(worst, err)
end
print(("hypot kernel matches plain Lua on all %d elements (largest relative difference %.1e)")
      :format(n, worst))
