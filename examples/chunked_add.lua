-- "Parallelizing Custom CuPy Kernels with Dask" in luda: a raw kernel adds a 1024-long y
-- to every row of a 4096x1024 x split into 4x2 blocks, through map_blocks. Each block of
-- x is a view of x, so a row's stride is x's width, not the block's: the dispatch
-- function passes the kernel each block's row stride, as the post's does. The result is
-- checked against x + y computed on the whole arrays.
--   build/luda examples/chunked_add.lua        (LUDA_DEVICE=cpu: on the cpu)
local luda = require "luda"

local add_kernel = luda.raw_kernel([[
extern "C" __global__
void add_rows(const float* x, const float* y, float* out, long long rows, long long cols, long long x_row_stride) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * cols) return;
    long long r = i / cols, c = i % cols;
    out[i] = x[r * x_row_stride + c] + y[c];
}
]], "add_rows")

-- One block: x's block (a strided view) and y's matching piece; a new contiguous block.
local function dispatch_add(x, y)
  local out = luda.empty(x.shape, x.dtype)
  local rows, cols = x.shape[1], x.shape[2]
  local threads = 256
  add_kernel({ (rows * cols + threads - 1) // threads }, { threads }, { x, y, out, rows, cols, x.strides[1] })
  return out
end

local x = luda.random.random({ 4096, 1024 }, "float32", { seed = 1 })
local y = luda.random.random({ 1024 }, "float32", { seed = 2 })
local cx = luda.chunked(x, { 1024, 512 })   -- 4 x 2 blocks, each a view of x
local cy = luda.chunked(y, 512)             -- the pieces that line up with x's columns
print(cx)
print(("block (0, 1): shape (%d, %d), row stride %d elements"):format(cx:block(0, 1).shape[1],
  cx:block(0, 1).shape[2], cx:block(0, 1).strides[1]))

local result = luda.map_blocks(dispatch_add, cx, cy)
print(result)
local want = x + y
local got = result:compute()
assert(luda.all(luda.equal(got, want)):item(), "the chunked result differs from x + y")
print("map_blocks(dispatch_add) equals x + y on all " .. x.size .. " elements")
