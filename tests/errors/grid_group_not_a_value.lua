-- A grid group is not a value: only its methods are used.
-- sig: void(int32[:])
-- expect:
-- tests/errors/grid_group_not_a_value.lua:9:23: type error: the group cuda.cg.this_grid() (call its methods: g:sync()) is not a value: it cannot be assigned
--     out[cuda.grid(1)] = cuda.cg.this_grid()
--                         ^~~~~~~~~~~~~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  out[cuda.grid(1)] = cuda.cg.this_grid()
end)
