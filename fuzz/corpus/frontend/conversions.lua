-- void(float64[:], int8[:], uint32[:], int64[:])
local function k(x, a, u, out)
  local i = cuda.grid(1)
  a[i] = x[i] * 1e10
  u[i] = luda.uint32(x[i]) + math.floor(x[i] / 0)
  out[i] = math.ceil(x[i]) + luda.int64(0 / 0)
  for j = 0, x[i] do out[i] = out[i] + j end
end
