-- cuda.fns given a float offset: numba.cuda's fns takes integers only.
-- sig: void(uint32[:], float32)
-- expect:
-- tests/errors/fns_offset_not_integer.lua:10:32: type error: cuda.fns expects an integer offset, got float32
--     out[i] = cuda.fns(out[i], 0, k)
--                                  ^
local cuda = require("luda").cuda
return cuda.jit(function(out, k)
  local i = cuda.grid(1)
  out[i] = cuda.fns(out[i], 0, k)
end)
