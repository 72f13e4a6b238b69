-- float32(float32)
-- vectorize: arithmetic on a bool, at its line and column in the scalar function.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_vectorize_bool_plus_number.lua:9:18: type error: cannot apply '+' to bool and float32
--     return (x > 0) + x
--            ~~~~~~~~^~~
local luda = require("luda")
return luda.vectorize(function(x)
  return (x > 0) + x
end)
