-- void(float32[:])
-- A vararg kernel.
-- sig: void(float32[:])
-- expect:
-- tests/errors/vararg_in_kernel.lua:8:17: unsupported: varargs ('...') are not supported in kernels and device functions
--     return cuda.jit(function(out, ...)
--                     ^
local cuda = require("luda").cuda
return cuda.jit(function(out, ...)
  out[0] = 1
end)
