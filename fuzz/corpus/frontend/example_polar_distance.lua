-- Numba's polar_distance in luda: a device function that returns two values (polar to
-- cartesian coordinates), called twice by another device function, called by a kernel.
-- Everything stays in float32: the literals 2 and 0.5 are weak and take float32.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/polar_distance.lua
local luda = require "luda"
local cuda = luda.cuda

-- Two results: a device function returns a tuple, which `local a, b = f()` unpacks.
local function polar_to_cartesian(rho, theta)
  return rho * math.cos(theta), rho * math.sin(theta)
end

local function polar_distance(rho1, theta1, rho2, theta2)
  local x1, y1 = polar_to_cartesian(rho1, theta1)
  local x2, y2 = polar_to_cartesian(rho2, theta2)
  return ((x1 - x2) ^ 2 + (y1 - y2) ^ 2) ^ 0.5
end

local distance_kernel = cuda.jit(function(rho1, theta1, rho2, theta2, out)
  local i = cuda.grid(1)
  if i < #out then
    out[i] = polar_distance(rho1[i], theta1[i], rho2[i], theta2[i])
  end
end)

-- Numba's inputs: radii uniform in [0.5, 1.5), angles uniform in [-4, 4).
local n = 1000000
local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
local columns = { {}, {}, {}, {} }
for i = 1, n do
  columns[1][i] = f32(0.5 + math.random())
  columns[2][i] = f32(8 * math.random() - 4)
  columns[3][i] = f32(0.5 + math.random())
  columns[4][i] = f32(8 * math.random() - 4)
end
local rho1, theta1 = luda.array(columns[1], "float32"), luda.array(columns[2], "float32")
local rho2, theta2 = luda.array(columns[3], "float32"), luda.array(columns[4], "float32")
local out = luda.empty(n, "float32")

local threads = 256
distance_kernel[{(n + threads - 1) // threads, threads}](rho1, theta1, rho2, theta2, out)
print(("polar_distance over %d float32 point pairs:"):format(n))
print(out)

-- The same functions as plain Lua (float64). x1 - x2 cancels, so the error is measured
-- against the size of the points (the radii), not the size of the distance.
local result, worst = out:totable(), 0
for i = 1, n do
  local r1, t1, r2, t2 = columns[1][i], columns[2][i], columns[3][i], columns[4][i]
  local expected = polar_distance(r1, t1, r2, t2)
  local err = math.abs(result[i] - expected) / (r1 + r2)
  if err > 2e-6 then
    error(("polar_distance: out[%d] = %.9g, plain Lua gives %.9g for (%.9g, %.9g), (%.9g, %.9g)")
          :format(i - 1, result[i], expected, r1, t1, r2, t2))
  end
  worst = math.max(worst, err)
end
print(("polar_distance matches plain Lua on all %d elements (largest difference %.1e of the radii)")
      :format(n, worst))
