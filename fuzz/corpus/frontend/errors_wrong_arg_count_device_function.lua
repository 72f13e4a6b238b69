-- void(float32[:])
-- A device function called with too few arguments.
-- sig: void(float32[:])
-- expect:
-- tests/errors/wrong_arg_count_device_function.lua:11:12: type error: 'scale' takes 2 arguments, got 1
--     out[i] = scale(out[i])
--              ^~~~~~~~~~~~~
local cuda = require("luda").cuda
local function scale(v, factor) return v * factor end
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = scale(out[i])
end)
