-- void(float32[:], int64)
-- A shared array whose shape is not a constant.
-- sig: void(float32[:], int64)
-- expect:
-- tests/errors/non_constant_shared_shape.lua:9:34: type error: cuda.shared.array: the shape must be a constant number or a table of constant numbers (e.g. {32, 33}), known when the kernel is compiled
--     local tile = cuda.shared.array(n, "float32")
--                                    ^
local cuda = require("luda").cuda
return cuda.jit(function(out, n)
  local tile = cuda.shared.array(n, "float32")
  tile[0] = out[0]
end)
