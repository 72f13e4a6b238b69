-- Static shared arrays past what a GPU block may declare (48 KiB; more must be dynamic).
-- sig: void(float32[:])
-- expect:
-- tests/errors/shared_array_too_large.lua:10:13: type error: cuda.shared.array: the function's shared arrays take 65536 bytes (32768 bytes of them this one); a GPU block has at most 49152 bytes (48 KiB) of static shared memory: use cuda.shared.dynamic for more (up to 227 KiB, sized at launch)
--     local b = cuda.shared.array({64, 64}, "float64")
--               ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local a = cuda.shared.array(8192, "float32")
  local b = cuda.shared.array({64, 64}, "float64")
  a[0] = out[0]
  b[0][0] = out[1]
end)
