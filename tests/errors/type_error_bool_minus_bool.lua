-- Subtracting bools: NumPy refuses it too; + and * of bools are or and and.
-- sig: void(bool[:], bool[:], bool[:])
-- expect:
-- tests/errors/type_error_bool_minus_bool.lua:10:17: type error: cannot apply '-' to bool and bool: NumPy's boolean subtract is not supported; for exclusive or write a ~= b
--     out[i] = a[i] - b[i]
--              ~~~~~^~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(a, b, out)
  local i = cuda.grid(1)
  out[i] = a[i] - b[i]
end)
