-- Float sums on the cpu device, timed (best of 9), with the float32 sum of 1e7 x 0.1
-- whose exact value is 1000000.015: for bench/RESULTS.md, beside NumPy on the same arrays.
--   LUDA_DEVICE=cpu LUDA_CPU_THREADS=2 build/luda bench/cpu_sums.lua
local luda = require "luda"
local x = luda.full(1e7, 0.1, "float32")
local m = luda.random.random({2000, 2000}, "float32", {seed = 1})
local z = luda.random.random({1e7}, "float64", {seed = 2})
local function best(f) local b = 1e9 for _ = 1, 9 do local t = luda.clock() f() local d = luda.clock() - t if d < b then b = d end end return b * 1e3 end
print(("value %.9g"):format(x:sum():item()))
print(("full sum float32 1e7: %.3f ms"):format(best(function() x:sum():item() end)))
print(("full sum float64 1e7: %.3f ms"):format(best(function() z:sum():item() end)))
print(("rows m:sum(2) 2000^2 float32: %.3f ms"):format(best(function() m:sum(2):totable() end)))
print(("columns m:sum(1) 2000^2 float32: %.3f ms"):format(best(function() m:sum(1):totable() end)))
print(("mean float32 1e7: %.3f ms"):format(best(function() x:mean():item() end)))
