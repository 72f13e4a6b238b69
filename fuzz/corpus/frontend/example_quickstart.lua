-- luda quickstart: arrays on the default device, then a raw CUDA kernel run where its
-- arrays are.
--   build/luda examples/quickstart.lua
-- The default device is the first GPU, else the cpu (luda says so once on stderr);
-- LUDA_DEVICE=cpu chooses the cpu. The same kernel source runs on either.
local luda = require "luda"

print("device: " .. tostring(luda.current_device()))

-- Arrays: NumPy's constructors, views without copies, NumPy's printing.
local x = luda.arange(12, "float32"):reshape(3, 4)
print(x)
print("shape {" .. table.concat(x.shape, ", ") .. "}", "dtype " .. x.dtype, "size " .. x.size)
print("x[1], the second row (a view):")
print(x[1])
print("x:transpose():")
print(x:transpose())
-- Element offsets are 0-based, Lua sequences (totable, shape) 1-based.
assert(x[1][2] == 6 and x:totable()[2][3] == 6, "x[1][2] should be 6")

-- A raw kernel: CUDA C++ as is. Numbers convert to the declared parameter types (a to
-- float, n to int); array dtypes must match the pointees.
local saxpy = luda.raw_kernel([[
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]], "saxpy")

local n, a = 4096, 2.5
local xs, ys = {}, {}
for i = 1, n do
  xs[i], ys[i] = math.random() * 2 - 1, math.random() * 2 - 1
end
local xd, yd = luda.array(xs, "float32"), luda.array(ys, "float32")  -- on the default device
saxpy({(n + 127) // 128}, {128}, {a, xd, yd, n})
print("y = a * x + y on " .. tostring(yd.device) .. ":")
print(yd)

-- Check against the same computation on the host (float32 inputs, float64 math).
local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
local result = yd:get():totable()
for i = 1, n do
  local expected = f32(a) * f32(xs[i]) + f32(ys[i])
  if math.abs(result[i] - expected) > 1e-6 * (1 + math.abs(expected)) then
    error(string.format("saxpy: y[%d] = %.9g, expected %.9g", i - 1, result[i], expected))
  end
end
print(string.format("saxpy matches the host on all %d elements", n))
