-- float32(float32)
-- fuse: the axis of the final reduction must be written as a literal.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_fuse_axis_not_literal.lua:10:26: type error: the axis of a fused luda.sum must be a literal integer or a table of them ({1, 2}), known when the function is compiled
--     return luda.sum(x * x, axis)
--                            ^~~~
local luda = require("luda")
local axis = 1
return luda.fuse(function(x)
  return luda.sum(x * x, axis)
end)
