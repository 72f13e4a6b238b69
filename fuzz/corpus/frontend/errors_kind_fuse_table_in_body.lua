-- float32(float32)
-- fuse: the body is elementwise arithmetic; a table constructor is not.
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_fuse_table_in_body.lua:9:13: unsupported: tables cannot be created inside a kernel (a table of constants is allowed only as the shape of cuda.shared.array / cuda.local_array)
--     local t = { x, x }
--               ^~~~~~~~
local luda = require("luda")
return luda.fuse(function(x)
  local t = { x, x }
  return x
end)
