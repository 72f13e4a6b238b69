-- void(float32[:])
-- A builtin called with the wrong number of arguments.
-- sig: void(float32[:])
-- expect:
-- tests/errors/wrong_arg_count_builtin.lua:10:21: type error: math.sqrt takes 1 argument, got 2
--     out[i] = math.sqrt(out[i], 2)
--              ~~~~~~~~~^~~~~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = math.sqrt(out[i], 2)
end)
