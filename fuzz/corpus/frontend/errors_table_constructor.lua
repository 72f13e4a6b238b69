-- void(float32[:])
-- A table constructor inside a kernel.
-- sig: void(float32[:])
-- expect:
-- tests/errors/table_constructor.lua:9:13: unsupported: tables cannot be created inside a kernel (a table of constants is allowed only as the shape of cuda.shared.array / cuda.local_array)
--     local t = { 1, 2 }
--               ^~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local t = { 1, 2 }
  out[0] = t[1]
end)
