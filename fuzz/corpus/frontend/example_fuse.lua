-- CuPy's fuse in luda: a Lua function of arrays and scalars becomes one kernel, an
-- elementwise one, or a reduction when it ends in `return luda.sum(expr)` (or max, min,
-- prod, with an optional axis). First the user guide's squared_diff (its printed
-- result), then the sum of the squared differences, then the layer x * w + b over a
-- million random float32 values, checked against the same function run as plain Lua.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/fuse.lua
local luda = require "luda"

local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end

-- CuPy user guide, "Kernel fusion": x and x reversed (a view with a negative stride).
local squared_diff = luda.fuse(function(x, y) return (x - y) * (x - y) end, { name = "squared_diff" })
local x = luda.arange(10)
local y = x:slice("::-1")
print("squared_diff(x, x reversed):")
print(squared_diff(x, y))

-- A final reduction makes the fused function a reduction kernel: one pass, no
-- intermediate array.
local sum_squared_diff = luda.fuse(function(a, b) return luda.sum((a - b) * (a - b)) end)
print(("sum of the squared differences: %d"):format(sum_squared_diff(x, y):item()))   -- 330
local row_sums = luda.fuse(function(a) return luda.sum(a * a, 2) end)
print("row sums of squares of [[0, 1, 2], [3, 4, 5]]:")
print(row_sums(luda.arange(6):reshape(2, 3)))    -- 0+1+4 = 5, 9+16+25 = 50
print()

-- The layer: three arrays in, one out, one kernel.
local layer = luda.fuse(function(x, w, b) return x * w + b end, { name = "dnnLayerNode" })
local n = 1000000
local tx, tw, tb = {}, {}, {}
for i = 1, n do
  tx[i], tw[i], tb[i] = f32(2 * math.random() - 1), f32(2 * math.random() - 1), f32(2 * math.random() - 1)
end
local z = layer(luda.array(tx, "float32"), luda.array(tw, "float32"), luda.array(tb, "float32"))
print(("fused x * w + b over %d float32 elements:"):format(n))
print(z)

-- layer.lua is the function given to fuse, runnable as plain Lua on numbers. float32
-- rounds x * w and the sum (or, on a GPU, may fuse them): within an ulp of each.
local result, worst = z:totable(), 0
for i = 1, n do
  local expected = layer.lua(tx[i], tw[i], tb[i])
  local err = math.abs(result[i] - expected)
  if err > 2 ^ -23 * (math.abs(tx[i] * tw[i]) + math.abs(expected)) then
    error(("fuse: z[%d] = %.9g, plain Lua gives %.9g for x = %.9g, w = %.9g, b = %.9g")
          :format(i - 1, result[i], expected, tx[i], tw[i], tb[i]))
  end
  worst = math.max(worst, err)
end
print(("fused layer matches plain Lua on all %d elements (largest difference %.1e)"):format(n, worst))
