-- The SVD of "NumPy's __array_function__" post in luda: a 10000x1000 float64 array split
-- into 5000x1000 chunks; linalg.svd takes the chunked array as it takes a plain one
-- (TSQR: a QR per block, then the SVD of the stacked R factors), and gives the singular
-- values the one-array SVD gives.
--   build/luda examples/chunked_svd.lua [rows cols block_rows]
local luda = require "luda"

local rows, cols, block = tonumber(arg and arg[1]) or 10000, tonumber(arg and arg[2]) or 1000,
  tonumber(arg and arg[3]) or 5000
local x = luda.random.random({ rows, cols }, "float64", { seed = 7 })

-- The same code for either kind of array.
local function singular_values(a)
  local u, s, vh = luda.linalg.svd(a, { full_matrices = false })
  return u, s, vh
end

-- Each call timed after one untimed call (the first compiles kernels and starts cuSOLVER
-- on each device the blocks are on), waiting for every GPU.
local function timed(a)
  singular_values(a)
  local t0 = luda.clock()
  local u, s, vh = singular_values(a)
  for d = 0, luda.cuda.device_count() - 1 do luda.device(d):synchronize() end
  return (luda.clock() - t0) * 1e3, u, s, vh
end

local c = luda.chunked(x, { block, cols })
print(c)
local t_chunked, u, s = timed(c)
local t_one, _, s1 = timed(x)
print(u)
local largest = s1[0]
local diff = luda.max(luda.abs(s - s1)):item()
print(("largest singular value %.6f; the chunked and one-array values differ by %.3g x the largest"):format(
  largest, diff / largest))
assert(diff <= 1e-10 * largest, "the chunked singular values differ from the one-array SVD")
local ua = u:compute()
local orth = luda.max(luda.abs(luda.matmul(ua.T, ua) - luda.eye(cols))):item()
print(("U is orthonormal to %.3g"):format(orth))
assert(orth <= 1e-10, "U is not orthonormal")
print(("chunked svd %.1f ms, one-array svd %.1f ms"):format(t_chunked, t_one))
