-- A grid group has one method, sync.
-- sig: void(int32[:])
-- expect:
-- tests/errors/grid_group_no_method.lua:11:5: name error: cuda.cg.this_grid() has no method 'wait' (it has: sync)
--     g:wait()
--       ^
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local g = cuda.cg.this_grid()
  out[cuda.grid(1)] = 1
  g:wait()
end)
