-- void(float32[:])
-- A bitwise operator on a float.
-- sig: void(float32[:])
-- expect:
-- tests/errors/type_error_bitwise_float.lua:10:19: type error: bitwise '&' needs integers, got float32 and int64 (convert with math.floor(x) or luda.int64(x))
--     out[i] = out[i] & 1
--              ~~~~~~~^~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = out[i] & 1
end)
