-- float32(float32)
-- vectorize: a type error inside a device function the scalar function calls, at the
-- device function's own line.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_vectorize_device_function_error.lua:10:12: type error: cannot apply '*' to float32 and bool
--     return v * true
--            ~~^~~~~~
local luda = require("luda")
local function scale(v)
  return v * true
end
return luda.vectorize(function(x)
  return scale(x) + 1
end)
