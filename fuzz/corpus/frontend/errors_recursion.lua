-- void(int64[:])
-- A device function that calls itself.
-- sig: void(int64[:])
-- expect:
-- tests/errors/recursion.lua:10:14: unsupported: recursion is not supported in kernels: 'fact' -> 'fact'
--     return n * fact(n - 1)
--                ^~~~~~~~~~~
local cuda = require("luda").cuda
local function fact(n)
  if n <= 1 then return 1 end
  return n * fact(n - 1)
end
return cuda.jit(function(out)
  out[0] = fact(out[0])
end)
