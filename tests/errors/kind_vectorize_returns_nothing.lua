-- vectorize: a scalar function with no return value.
-- sig: float32(float32)
-- expect:
-- vectorize 'fn': the function returns no value; return the element's result
local luda = require("luda")
return luda.vectorize(function(x)
  local y = x * 2
end)
