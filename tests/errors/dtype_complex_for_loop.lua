-- A 'for' loop over complex numbers.
-- sig: void(complex64[:])
-- expect:
-- tests/errors/dtype_complex_for_loop.lua:10:11: type error: 'for' initial value must be a real number, got complex64
--     for k = out[0], 3 do out[i] = k end
--             ^~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.grid(1)
  for k = out[0], 3 do out[i] = k end
end)
