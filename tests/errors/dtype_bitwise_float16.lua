-- A bitwise operator on a float16.
-- sig: void(float16[:])
-- expect:
-- tests/errors/dtype_bitwise_float16.lua:10:19: type error: bitwise '&' needs integers, got float16 and int64 (convert with math.floor(x) or luda.int64(x))
--     out[i] = out[i] & 1
--              ~~~~~~~^~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = out[i] & 1
end)
