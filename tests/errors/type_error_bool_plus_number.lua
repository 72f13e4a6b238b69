-- Arithmetic on a bool (docs/language.md's example).
-- sig: void(float32[:], float32[:])
-- expect:
-- tests/errors/type_error_bool_plus_number.lua:10:23: type error: cannot apply '+' to bool and float32
--     out[i] = (x[i] > 0) + x[i]
--              ~~~~~~~~~~~^~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(x, out)
  local i = cuda.grid(1)
  out[i] = (x[i] > 0) + x[i]
end)
