-- Numba's matrix transpose in luda, two ways: naive (each thread copies one element, so
-- either the reads or the writes are strided) and tiled (a block stages a 32x32 tile in
-- shared memory, so that both the reads and the writes are coalesced; the tile has 33
-- columns so that reading a column does not hit one shared-memory bank 32 times).
-- Both are checked against a host transpose of random int32 data.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/transpose.lua [rows cols]
local luda = require "luda"
local cuda = luda.cuda

-- One thread per element: cuda.grid(2) gives the column (x) and the row (y).
local transpose_naive = cuda.jit(function(a, out)
  local x, y = cuda.grid(2)
  if y < a.shape[1] and x < a.shape[2] then
    out[x][y] = a[y][x]
  end
end)

-- Upvalues are frozen into the kernel as constants, so they may size a shared array.
local TILE = 32
local TILE_PADDED = TILE + 1

-- Launched with TILE x TILE threads per block. Rows and columns need not be multiples of
-- TILE: the edges are guarded on both sides of the barrier, which every thread reaches.
local transpose_tiled = cuda.jit(function(a, out)
  local tile = cuda.shared.array({TILE, TILE_PADDED}, "int32")
  local tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
  local x = cuda.blockIdx.x * TILE + tx
  local y = cuda.blockIdx.y * TILE + ty
  if y < a.shape[1] and x < a.shape[2] then
    tile[ty][tx] = a[y][x]            -- coalesced read of a row of a
  end
  cuda.syncthreads()
  x = cuda.blockIdx.y * TILE + tx     -- the transposed block: swap the block coordinates
  y = cuda.blockIdx.x * TILE + ty
  if y < out.shape[1] and x < out.shape[2] then
    out[y][x] = tile[tx][ty]          -- coalesced write of a row of out
  end
end)

local rows, cols = tonumber(arg and arg[1]) or 1000, tonumber(arg and arg[2]) or 600
local data = {}
for i = 1, rows do
  local row = {}
  for j = 1, cols do row[j] = math.random(-2147483648, 2147483647) end
  data[i] = row
end
local a = luda.array(data, "int32")

-- The host transpose, in plain Lua; out must equal it exactly.
local function check(out, label)
  assert(out.shape[1] == cols and out.shape[2] == rows, label .. ": wrong shape")
  local t = out:totable()
  for j = 1, cols do
    for i = 1, rows do
      if t[j][i] ~= data[i][j] then
        error(("%s: out[%d][%d] = %d, a[%d][%d] = %d"):format(label, j - 1, i - 1, t[j][i], i - 1, j - 1, data[i][j]))
      end
    end
  end
  print(("%s transpose of a %dx%d int32 array matches the host transpose"):format(label, rows, cols))
end

local grid = { (cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE }
local naive = luda.empty({cols, rows}, "int32")
transpose_naive[{grid = grid, block = {TILE, TILE}}](a, naive)
check(naive, "naive")

local tiled = luda.empty({cols, rows}, "int32")
transpose_tiled[{grid = grid, block = {TILE, TILE}}](a, tiled)
check(tiled, "tiled")

-- The results, for a caller that runs this file as a chunk (tests/lua/bit_identical_spec.lua
-- compares them across devices).
return naive, tiled
