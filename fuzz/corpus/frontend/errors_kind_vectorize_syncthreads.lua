-- float32(float32)
-- vectorize: a scalar function that calls a barrier (a kind runs one element per thread).
-- sig: float32(float32)
-- expect:
-- tests/errors/kind_vectorize_syncthreads.lua:9:23: unsupported: vectorize 'fn' calls a barrier or a warp function (cuda.syncthreads, shuffles, votes); a kind runs each element on its own, so use luda.cuda.jit for cooperating threads
--     return luda.vectorize(function(x)
--                           ^
local luda = require("luda")
local cuda = luda.cuda
return luda.vectorize(function(x)
  cuda.syncthreads()
  return x
end)
