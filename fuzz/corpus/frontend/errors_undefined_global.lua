-- void(float32[:])
-- A name that is neither a local, an upvalue nor a defined global.
-- sig: void(float32[:])
-- expect:
-- tests/errors/undefined_global.lua:10:12: name error: unknown name 'undefined_scale_factor'
--     out[i] = undefined_scale_factor * out[i]
--              ^~~~~~~~~~~~~~~~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = undefined_scale_factor * out[i]
end)
