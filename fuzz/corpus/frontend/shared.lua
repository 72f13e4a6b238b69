-- void(float32[:,:], float32[:,:])
local TILE = 16
local function transpose(a, out)
  local tile = cuda.shared.array({TILE, TILE + 1}, "float32")
  local tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
  local x, y = cuda.grid(2)
  if y < a.shape[1] and x < a.shape[2] then tile[ty][tx] = a[y][x] end
  cuda.syncthreads()
  local v = cuda.shfl_down_sync(0xffffffff, tile[tx][ty], 1)
  cuda.atomic.add(out, 0, 0, v)
  repeat x = x - 1 until x < 0
  while y > 0 do y = y - 1 break end
end
