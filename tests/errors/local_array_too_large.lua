-- A local array past a GPU thread's local memory (512 KiB).
-- sig: void(float64[:])
-- expect:
-- tests/errors/local_array_too_large.lua:9:19: type error: cuda.local_array: the function's local arrays take 8388608 bytes; a GPU thread has at most 524288 bytes (512 KiB) of local memory: use an array argument (global memory)
--     local scratch = cuda.local_array({1024, 1024}, "float64")
--                     ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local scratch = cuda.local_array({1024, 1024}, "float64")
  scratch[0][0] = out[0]
  out[1] = scratch[0][0]
end)
