-- void(float32[:])
-- A signature with fewer parameters than the kernel has.
-- sig: void(float32[:])
-- expect:
-- kernel 'kernel' takes 2 arguments (x, out), got 1
local cuda = require("luda").cuda
return cuda.jit(function(x, out)
  out[0] = x[0]
end)
