-- void(float32[:, :], int64[:])
local function k(x, out) local k = cuda.grid(1) out[k] = x.shape[k] end
