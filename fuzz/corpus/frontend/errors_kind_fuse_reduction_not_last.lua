-- float32(float32)
-- fuse: a reduction anywhere but the final return.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_fuse_reduction_not_last.lua:9:10: unsupported: luda.sum in a fused function must be its final value: return luda.sum(expr, axis) (elementwise work first, then one reduction)
--     return luda.sum(x) + 1
--            ^~~~~~~~~~~
local luda = require("luda")
return luda.fuse(function(x)
  return luda.sum(x) + 1
end)
