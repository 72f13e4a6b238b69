-- void(int64[:])
-- A mistake only NVRTC sees (a shared array larger than any address space): its
-- diagnostic points at the Lua line through #line, and the error leads with that line in
-- the form of every located error. The message goes on with NVRTC's log and the numbered
-- generated source, which changes with the prelude: the lines below are pinned.
-- sig: void(int64[:])
-- inspect: ptx
-- expect-within:
-- tests/errors/nvrtc_diagnostic.lua:15:3: compile error: array is too large
--     local scratch = cuda.shared.array(2305843009213693952, "float64")
--     ^
-- NVRTC failed to compile 'kernel.cu' for compute_90 (options: --gpu-architecture=compute_90 -default-device -I/usr/local/cuda/include)
-- tests/errors/nvrtc_diagnostic.lua(15): error: array is too large
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local scratch = cuda.shared.array(2305843009213693952, "float64")
  scratch[out[0]] = out[0]
  out[1] = scratch[1]
end)
