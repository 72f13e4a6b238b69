-- fuse: every reduction of a fused function reduces the same axes.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_fuse_reductions_axes.lua:9:27: unsupported: the reductions of a fused function reduce the same axes: this luda.max has axis 2, the luda.sum at 9:10 has axis 1; use one fused function per axis
--     return luda.sum(x, 1) - luda.max(x, 2)
--                             ^~~~~~~~~~~~~~
local luda = require("luda")
return luda.fuse(function(x)
  return luda.sum(x, 1) - luda.max(x, 2)
end)
