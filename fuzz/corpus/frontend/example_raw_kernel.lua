-- CuPy's RawKernel example (CuPy user guide, "Raw kernels") in luda: the same CUDA
-- source adds two 10x10 float32 arrays, launched as grid (10,) block (10,) and as
-- grid (1,) block (100,). Each result is printed and checked against the host.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/raw_kernel.lua
local luda = require "luda"

local add_kernel = luda.raw_kernel([[
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
]], "my_add")

-- y must equal x1 + x2 rounded to float32, element for element.
local function check(y, x1, x2, label)
  local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
  local a, b, r = x1:totable(), x2:totable(), y:totable()
  for i = 1, #r do
    for j = 1, #r[i] do
      local expected = f32(a[i][j] + b[i][j])
      if r[i][j] ~= expected then
        error(string.format("%s: y[%d][%d] = %.9g, expected %.9g", label, i - 1, j - 1, r[i][j], expected))
      end
    end
  end
  print(label .. ": y equals x1 + x2 computed on the host")
end

local x1 = luda.arange(100, "float32"):reshape(10, 10)
local x2 = luda.arange(100, "float32"):reshape(10, 10)
local y = luda.zeros({10, 10}, "float32")
add_kernel({10}, {10}, {x1, x2, y})  -- grid, block and arguments
print(y)
check(y, x1, x2, "grid (10,) block (10,)")

-- One block of 100 threads covers the same 100 elements; x2 random this time.
local r = {}
for i = 1, 10 do
  r[i] = {}
  for j = 1, 10 do r[i][j] = math.random() end
end
x2 = luda.array(r, "float32")
y = luda.zeros({10, 10}, "float32")
add_kernel({1}, {100}, {x1, x2, y})
print(y)
check(y, x1, x2, "grid (1,) block (100,)")
