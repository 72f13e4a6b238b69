-- CuPy's ReductionKernel in luda: map, reduce (a, b), post-map and identity as Lua
-- expressions. First the user guide's l2norm along an axis (its printed result), then
-- dnnLayer, the layer's dot product plus a bias (map x * w, reduce a + b, post-map
-- z = a + bias): on small inputs whose results can be checked by hand, then over a
-- million random float32 values against a float64 sum in plain Lua.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/reduction.lua
local luda = require "luda"

local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end

-- CuPy user guide, "Reduction kernels": the L2 norm of each row. CuPy's axis=1 is luda's
-- axis 2 (axes are positions in x.shape, 1-based as every Lua sequence).
local l2norm = luda.reduction("T x", "T y", "x * x", "a + b", "y = math.sqrt(a)", "0", "l2norm")
local x = luda.arange(10, "float32"):reshape(2, 5)
print("l2norm(x, {axis = 2}):")
print(l2norm(x, { axis = 2 }))
print()

-- dnnLayer: T bound from the arrays; the bias is a Lua number, converted to T.
local dnnLayer = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnnLayer")
local w = luda.arange(5, "float32")              -- broadcast over the rows of x
-- rows: 0*0 + 1*1 + 2*2 + 3*3 + 4*4 = 30 and 5*0 + 6*1 + 7*2 + 8*3 + 9*4 = 80
print("dnnLayer(x, w, 0.5) with x = [[0..4], [5..9]], w = [0..4]:")
print(dnnLayer(x, w, 0.5))                       -- all elements: 110.5
print("dnnLayer(x, w, 0.5, {axis = 2}):")
print(dnnLayer(x, w, 0.5, { axis = 2 }))         -- per row: 30.5, 80.5
print()

-- A million random elements: the float32 sum's rounding depends on the order of the
-- additions, so the check allows 2^-20 of the sum of |x * w| (a few float32 ulps of it).
local n = 1000000
local tx, tw = {}, {}
for i = 1, n do tx[i], tw[i] = f32(2 * math.random() - 1), f32(2 * math.random() - 1) end
local X, W = luda.array(tx, "float32"), luda.array(tw, "float32")
local got = dnnLayer(X, W, 0.25):item()
local exact, scale = 0.25, 0
for i = 1, n do
  exact = exact + tx[i] * tw[i]
  scale = scale + math.abs(tx[i] * tw[i])
end
if math.abs(got - exact) > 2 ^ -20 * scale then
  error(("dnnLayer: %.9g, the float64 sum in plain Lua is %.9g (allowed difference %.3g)"):format(got, exact, 2 ^ -20 * scale))
end
print(("dnnLayer over %d float32 elements: %.6g, the float64 sum in plain Lua %.6g (difference %.1e of the sum of |x * w|)")
      :format(n, got, exact, math.abs(got - exact) / scale))
