-- fuse: a reduction anywhere but the final return.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_fuse_reduction_not_last.lua:9:13: unsupported: luda.sum in a fused function must be in its final return: return luda.sum(expr, axis), or elementwise work on reductions (elementwise work first, then the reductions)
--     local s = luda.sum(x)
--               ^~~~~~~~~~~
local luda = require("luda")
return luda.fuse(function(x)
  local s = luda.sum(x)
  return s * 2
end)
