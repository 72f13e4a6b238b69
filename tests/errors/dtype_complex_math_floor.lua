-- math.floor of a complex number.
-- sig: void(complex128[:])
-- expect:
-- tests/errors/dtype_complex_math_floor.lua:10:23: type error: math.floor is not defined for complex numbers (nor is NumPy's)
--     out[i] = math.floor(out[i])
--                         ^~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = math.floor(out[i])
end)
