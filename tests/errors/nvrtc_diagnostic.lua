-- A mistake only NVRTC sees (a shared array larger than any address space): its
-- diagnostic points at the Lua line through #line. The message goes on with the
-- numbered generated source, which changes with the prelude: the lines below are pinned.
-- sig: void(int64[:])
-- inspect: ptx
-- expect-within:
-- tests/errors/nvrtc_diagnostic.lua(14): error: array is too large
--     __shared__ double scratch_storage[2305843009213693952];
--                       ^
--
-- 1 error detected in the compilation of "kernel.cu".
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local scratch = cuda.shared.array(2305843009213693952, "float64")
  scratch[out[0]] = out[0]
  out[1] = scratch[1]
end)
