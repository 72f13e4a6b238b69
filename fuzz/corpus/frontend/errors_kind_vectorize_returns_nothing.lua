-- float32(float32)
-- vectorize: a scalar function with no return value.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_vectorize_returns_nothing.lua:8:23: type error: vectorize 'fn' returns no value; return the element's result
--     return luda.vectorize(function(x)
--                           ^
local luda = require("luda")
return luda.vectorize(function(x)
  local y = x * 2
end)
