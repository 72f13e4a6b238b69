-- A misspelt builtin.
-- sig: void(float32[:])
-- expect:
-- tests/errors/unknown_builtin.lua:9:50: name error: 'cuda' has no member 'blockdim' (it has: threadIdx, blockIdx, blockDim, gridDim, laneid, warpsize, grid, gridsize, syncthreads, syncthreads_count, syncthreads_and, syncthreads_or, syncwarp, cg, threadfence, threadfence_block, threadfence_system, shared, local_array, atomic, shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, ballot_sync, all_sync, any_sync, match_any_sync, match_all_sync, random, activemask, lanemask_lt, popc, clz, ffs, brev, fns)
--     local i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockdim.x
--                                                    ^~~~~~~~~~~~~
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockdim.x
  out[i] = 1
end)
