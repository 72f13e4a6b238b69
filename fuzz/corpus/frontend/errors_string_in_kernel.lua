-- void(float32[:])
-- A string value inside a kernel (only print's arguments may be strings).
-- sig: void(float32[:])
-- expect:
-- tests/errors/string_in_kernel.lua:9:16: unsupported: strings are not values in kernels (only print's text and dtype names)
--     local name = "total"
--                  ^~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local name = "total"
  out[0] = 1
end)
