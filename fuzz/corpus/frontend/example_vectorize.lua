-- Numba's CUDA tutorial ufuncs in luda: `luda.vectorize` makes a scalar Lua function a
-- ufunc that broadcasts over arrays (add_ufunc), stays in float32 with float32
-- signatures (gaussian_pdf) and calls device functions (polar_distance), over a million
-- elements, each checked against the same function run as plain Lua.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and ufuncs run where their arrays are.
--   build/luda examples/vectorize.lua
local luda = require "luda"

local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end

-- add_ufunc: three signatures, compiled when vectorize is called; a call picks the one
-- its inputs match (here int64: luda.array of Lua integers is int64, as NumPy's is).
local add_ufunc = luda.vectorize({ "int64(int64, int64)", "float32(float32, float32)", "float64(float64, float64)" },
                                 function(x, y) return x + y end)
local a = luda.array({ 1, 2, 3, 4 })
local b = luda.array({ 10, 20, 30, 40 })
local b_col = b:reshape(4, 1)                 -- NumPy's b[:, np.newaxis]
local c = luda.arange(4 * 4):reshape(4, 4)
print("a + b:")
print(add_ufunc(a, b))
print()
print("b_col + c:")
print(add_ufunc(b_col, c))
print()

-- gaussian_pdf in float32: the constant and the literals are weak, so no float64 creeps
-- into the device code (math.exp becomes expf).
local SQRT_2PI = (2 * math.pi) ^ 0.5
local function gaussian_pdf_lua(x, mean, sigma)
  return math.exp(-0.5 * ((x - mean) / sigma) ^ 2) / (sigma * SQRT_2PI)
end
local gaussian_pdf = luda.vectorize({ "float32(float32, float32, float32)" }, gaussian_pdf_lua)

local n = 1000000
local xs = {}
for i = 1, n do xs[i] = f32(6 * math.random() - 3) end  -- uniform in [-3, 3), as Numba's
local x = luda.array(xs, "float32")
-- Lua numbers are scalars: 0 and 1 convert to the signature's float32.
local pdf = gaussian_pdf(x, 0, 1)
print(("gaussian_pdf over %d float32 values:"):format(n))
print(pdf)
-- all-scalar arguments give a Lua number, as Numba's ufunc gives a scalar
print(("gaussian_pdf(x[0], 0.0, 1.0) = %.7g (plain Lua: %.7g)"):format(
  gaussian_pdf(x[0], 0.0, 1.0), gaussian_pdf_lua(xs[1], 0.0, 1.0)))

-- float32 rounds each of a handful of operations (and expf): allow a few ulps.
local result, worst = pdf:totable(), 0
for i = 1, n do
  local expected = gaussian_pdf_lua(xs[i], 0, 1)
  local err = math.abs(result[i] - expected) / expected
  if err > 2e-6 then
    error(("gaussian_pdf: out[%d] = %.9g, plain Lua gives %.9g for x = %.9g"):format(i - 1, result[i], expected, xs[i]))
  end
  worst = math.max(worst, err)
end
print(("gaussian_pdf matches plain Lua on all %d elements (largest relative difference %.1e)"):format(n, worst))
print()

-- polar_distance: a device function returning two values, called twice.
local function polar_to_cartesian(rho, theta)
  return rho * math.cos(theta), rho * math.sin(theta)
end
local function polar_distance_lua(rho1, theta1, rho2, theta2)
  local x1, y1 = polar_to_cartesian(rho1, theta1)
  local x2, y2 = polar_to_cartesian(rho2, theta2)
  return ((x1 - x2) ^ 2 + (y1 - y2) ^ 2) ^ 0.5
end
local polar_distance = luda.vectorize({ "float32(float32, float32, float32, float32)" }, polar_distance_lua)

-- Numba's inputs: radii uniform in [0.5, 1.5), angles uniform in [-4, 4).
local columns = { {}, {}, {}, {} }
for i = 1, n do
  columns[1][i] = f32(0.5 + math.random())
  columns[2][i] = f32(8 * math.random() - 4)
  columns[3][i] = f32(0.5 + math.random())
  columns[4][i] = f32(8 * math.random() - 4)
end
local rho1, theta1 = luda.array(columns[1], "float32"), luda.array(columns[2], "float32")
local rho2, theta2 = luda.array(columns[3], "float32"), luda.array(columns[4], "float32")
local dist = polar_distance(rho1, theta1, rho2, theta2)
print(("polar_distance over %d float32 point pairs:"):format(n))
print(dist)

-- x1 - x2 cancels, so the error is measured against the size of the points (the radii).
result, worst = dist:totable(), 0
for i = 1, n do
  local r1, t1, r2, t2 = columns[1][i], columns[2][i], columns[3][i], columns[4][i]
  local expected = polar_distance_lua(r1, t1, r2, t2)
  local err = math.abs(result[i] - expected) / (r1 + r2)
  if err > 2e-6 then
    error(("polar_distance: out[%d] = %.9g, plain Lua gives %.9g for (%.9g, %.9g), (%.9g, %.9g)")
          :format(i - 1, result[i], expected, r1, t1, r2, t2))
  end
  worst = math.max(worst, err)
end
print(("polar_distance matches plain Lua on all %d elements (largest difference %.1e of the radii)"):format(n, worst))
