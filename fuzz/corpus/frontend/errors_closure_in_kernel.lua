-- void(float32[:])
-- A function expression (a closure) made inside a kernel.
-- sig: void(float32[:])
-- expect:
-- tests/errors/closure_in_kernel.lua:9:17: unsupported: closures cannot be created inside a kernel: define the function outside it (a kernel calls it as a device function)
--     local twice = function(v) return 2 * v end
--                   ^~~~~~~~~~~~~~~~~~~~~~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local twice = function(v) return 2 * v end
  out[0] = twice(out[0])
end)
