-- Negating a bool: NumPy refuses it too.
-- sig: void(bool[:], bool[:])
-- expect:
-- tests/errors/type_error_negate_bool.lua:10:12: type error: cannot negate bool: NumPy's boolean negative is not supported; for the logical not write not x
--     out[i] = -a[i]
--              ^~~~~
local cuda = require("luda").cuda
return cuda.jit(function(a, out)
  local i = cuda.grid(1)
  out[i] = -a[i]
end)
