-- void(float32[:])
-- A generic for inside a kernel.
-- sig: void(float32[:])
-- expect:
-- tests/errors/generic_for.lua:9:3: unsupported: the generic for (for k, v in ...) is not supported in kernels: use a numeric for
--     for i, v in ipairs(out) do
--     ^
local cuda = require("luda").cuda
return cuda.jit(function(out)
  for i, v in ipairs(out) do
    out[i] = v
  end
end)
