-- CuPy's ElementwiseKernel in luda: the parameter strings are CuPy's, the body is Lua.
-- First the user guide's squared_diff (its printed results), then dnnLayerNode, the
-- layer z = x * w + b with a type placeholder T: on small inputs whose results can be
-- checked by hand, then on a million random float32 values against plain Lua.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/elementwise.lua
local luda = require "luda"

local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end

-- CuPy user guide, "Basics of elementwise kernels": broadcasting a row over a matrix,
-- and a Lua number as a scalar argument.
local squared_diff = luda.elementwise("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
local x = luda.arange(10, "float32"):reshape(2, 5)
local y = luda.arange(5, "float32")
print("squared_diff(x, y):")
print(squared_diff(x, y))
print("squared_diff(x, 5):")
print(squared_diff(x, 5))
-- the output given after the inputs, as in CuPy
local z = luda.empty({ 2, 5 }, "float32")
squared_diff(x, y, z)
print("squared_diff(x, y, z) wrote z:")
print(z)
print()

-- dnnLayerNode: T is bound from the arguments (float32 here).
local dnnLayerNode = luda.elementwise("T x, T w, T b", "T z", "z = (x * w) + b", "dnnLayerNode")
local xs = luda.arange(6, "float32"):reshape(2, 3)   -- [[0, 1, 2], [3, 4, 5]]
local ws = luda.array({ 0.5, 1, 2 }, "float32")     -- one weight per column
print("dnnLayerNode(x, w, 1) with x = [[0, 1, 2], [3, 4, 5]], w = [0.5, 1, 2]:")
print(dnnLayerNode(xs, ws, 1))                       -- [[1, 2, 5], [2.5, 5, 11]]
print()

-- A million random elements, the output allocated once and passed in.
local n = 1000000
local tx, tw, tb = {}, {}, {}
for i = 1, n do
  tx[i], tw[i], tb[i] = f32(2 * math.random() - 1), f32(2 * math.random() - 1), f32(2 * math.random() - 1)
end
local X, W, B = luda.array(tx, "float32"), luda.array(tw, "float32"), luda.array(tb, "float32")
local Z = luda.empty(n, "float32")
dnnLayerNode(X, W, B, Z)
print(("dnnLayerNode over %d float32 elements:"):format(n))
print(Z)

-- float32 rounds x * w and the sum (or, on a GPU, may fuse them into one rounding):
-- within one float32 ulp of each of the two.
local result = Z:totable()
local worst = 0
for i = 1, n do
  local expected = tx[i] * tw[i] + tb[i]
  local ulp = 2 ^ -23 * (math.abs(tx[i] * tw[i]) + math.abs(expected))
  local err = math.abs(result[i] - expected)
  if err > ulp then
    error(("dnnLayerNode: z[%d] = %.9g, plain Lua gives %.9g for x = %.9g, w = %.9g, b = %.9g")
          :format(i - 1, result[i], expected, tx[i], tw[i], tb[i]))
  end
  worst = math.max(worst, err)
end
print(("dnnLayerNode matches plain Lua on all %d elements (largest difference %.1e)"):format(n, worst))
