-- void(float64[:], float64[:])
-- Lua's value-selecting `c and x or y` on numbers (kernels take and/or on bools only).
-- sig: void(float64[:], float64[:])
-- expect:
-- tests/errors/and_or_value_select.lua:10:21: type error: 'and' needs bool operands in a kernel, got bool and float64 (Lua's value-selecting 'a and b' on numbers is not supported: use if/else)
--     out[i] = x[i] > 0 and x[i] or -x[i]
--              ~~~~~~~~~^~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(x, out)
  local i = cuda.grid(1)
  out[i] = x[i] > 0 and x[i] or -x[i]
end)
