-- Floor division of complex numbers, which NumPy does not define either.
-- sig: void(complex64[:])
-- expect:
-- tests/errors/dtype_complex_floor_division.lua:10:19: type error: cannot apply '//' to complex64 and int64: floor division and modulo are not defined for complex numbers (NumPy's floor_divide and remainder are not either)
--     out[i] = out[i] // 2
--              ~~~~~~~^~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = out[i] // 2
end)
