-- The grid barrier takes no arguments.
-- sig: void(int32[:])
-- expect:
-- tests/errors/grid_sync_arguments.lua:10:27: type error: cuda.cg.this_grid():sync takes 0 arguments, got 1
--     cuda.cg.this_grid():sync(1)
--     ~~~~~~~~~~~~~~~~~~~~~~~~^~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  out[cuda.grid(1)] = 1
  cuda.cg.this_grid():sync(1)
end)
