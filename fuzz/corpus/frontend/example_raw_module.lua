-- CuPy's RawModule example (CuPy user guide, "Raw modules") in luda: one CUDA source
-- with two kernels, sum and multiply, fetched with get_function and launched on 10x10
-- float32 arrays. Each result is printed and checked against the host.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/raw_module.lua
local luda = require "luda"

local loaded_from_source = [[
extern "C"{

__global__ void test_sum(const float* x1, const float* x2, float* y, \
                         unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] + x2[tid];
    }
}

__global__ void test_multiply(const float* x1, const float* x2, float* y, \
                              unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] * x2[tid];
    }
}

}]]

local module = luda.raw_module(loaded_from_source)
local sum_ker = module:get_function("test_sum")
local multiply_ker = module:get_function("test_multiply")

-- y must equal op(x1, x2) rounded to float32, element for element (both operations are
-- exact in float64 for float32 inputs, so rounding once gives the GPU's answer).
local function check(y, x1, x2, op, label)
  local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
  local a, b, r = x1:totable(), x2:totable(), y:totable()
  for i = 1, #r do
    for j = 1, #r[i] do
      local expected = f32(op(a[i][j], b[i][j]))
      if r[i][j] ~= expected then
        error(string.format("%s: y[%d][%d] = %.9g, expected %.9g", label, i - 1, j - 1, r[i][j], expected))
      end
    end
  end
  print(label .. " matches the host")
end
local function add(p, q) return p + q end
local function mul(p, q) return p * q end

local N = 10
local x1 = luda.arange(N * N, "float32"):reshape(N, N)
local x2 = luda.ones({N, N}, "float32")
local y = luda.zeros({N, N}, "float32")
sum_ker({N}, {N}, {x1, x2, y, N * N})  -- y = x1 + x2
print(y)
check(y, x1, x2, add, "test_sum: y = x1 + x2")
multiply_ker({N}, {N}, {x1, x2, y, N * N})  -- y = x1 * x2
print(y)
check(y, x1, x2, mul, "test_multiply: y = x1 * x2")

-- The same kernels on random x2, so that neither result can come from x1 alone.
local r = {}
for i = 1, N do
  r[i] = {}
  for j = 1, N do r[i][j] = math.random() * 4 - 2 end
end
x2 = luda.array(r, "float32")
sum_ker({N}, {N}, {x1, x2, y, N * N})
check(y, x1, x2, add, "test_sum on random x2")
multiply_ker({N}, {N}, {x1, x2, y, N * N})
check(y, x1, x2, mul, "test_multiply on random x2")
