-- Sums of blocks of an array, the CUDA way: each warp adds its 32 values with warp
-- shuffles (no shared memory, no barrier), each warp's lane 0 leaves its sum in dynamic
-- shared memory (sized at launch, one slot per warp), and the first warp adds those.
-- int32 data, so the device's sums must equal the host's exactly.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/block_sum.lua
local luda = require "luda"
local cuda = luda.cuda

-- The sum over a warp: after log2(32) steps of shfl_down_sync, lane 0 holds it.
local function warp_sum(v)
  local offset = cuda.warpsize // 2
  while offset > 0 do
    v = v + cuda.shfl_down_sync(0xffffffff, v, offset)
    offset = offset // 2
  end
  return v
end

local block_sum = cuda.jit(function(x, sums)
  local partial = cuda.shared.dynamic("int32")  -- blockDim.x / 32 slots, sized at launch
  local i = cuda.grid(1)
  local v = 0                                   -- weak 0: v takes x's int32
  if i < #x then v = x[i] end                   -- threads past the end add 0
  v = warp_sum(v)
  local lane, warp = cuda.laneid, cuda.threadIdx.x // cuda.warpsize
  if lane == 0 then partial[warp] = v end
  cuda.syncthreads()
  if warp == 0 then
    local nwarps = cuda.blockDim.x // cuda.warpsize
    v = 0
    if lane < nwarps then v = partial[lane] end
    v = warp_sum(v)
    if lane == 0 then sums[cuda.blockIdx.x] = v end
  end
end)

local n, threads = 1000003, 256
local blocks = (n + threads - 1) // threads
local xs = {}
for i = 1, n do xs[i] = math.random(-1000000, 1000000) end
local sums = luda.empty(blocks, "int32")
block_sum[{grid = {blocks}, block = {threads}, shared = (threads // 32) * 4}](luda.array(xs, "int32"), sums)

-- The host's block sums, in plain Lua.
local got, total = sums:totable(), 0
for b = 1, blocks do
  local expected = 0
  for i = (b - 1) * threads + 1, math.min(b * threads, n) do expected = expected + xs[i] end
  if got[b] ~= expected then
    error(("block_sum: block %d sums to %d on the device, %d on the host"):format(b - 1, got[b], expected))
  end
  total = total + got[b]
end
print(("block_sum: %d blocks of %d int32 values match the host sums (total %d)"):format(blocks, threads, total))

-- The result, for a caller that runs this file as a chunk (tests/lua/bit_identical_spec.lua
-- compares it across devices).
return sums
