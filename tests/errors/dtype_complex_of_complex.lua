-- luda.complex64(re, im) of a complex part.
-- sig: void(complex64[:])
-- expect:
-- tests/errors/dtype_complex_of_complex.lua:11:27: type error: luda.complex64(re, im) takes two real numbers, got complex64
--     out[i] = luda.complex64(out[i], 1)
--                             ^~~~~~
local luda = require("luda")
local cuda = luda.cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = luda.complex64(out[i], 1)
end)
