-- The two-argument arc tangent of complex numbers.
-- sig: void(complex64[:])
-- expect:
-- tests/errors/dtype_complex_atan2.lua:10:22: type error: math.atan with 2 arguments is not defined for complex numbers (nor is NumPy's)
--     out[i] = math.atan(out[i], 1)
--                        ^~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = math.atan(out[i], 1)
end)
