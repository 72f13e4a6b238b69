-- void(float32[:])
-- An array captured as an upvalue instead of passed as an argument.
-- sig: void(float32[:])
-- expect:
-- tests/errors/array_upvalue.lua:11:12: type error: 'weights' is an array from outside the kernel: pass it as an argument
--     out[0] = weights[0]
--              ^~~~~~~
local luda = require "luda"
local cuda = luda.cuda
local weights = luda.zeros(4, "float32", { device = "cpu" })
return cuda.jit(function(out)
  out[0] = weights[0]
end)
