-- Raw kernels on a GPU: host dispatch per call and the bandwidth of an add, next to a
-- device-to-device copy measured in the same run.
--   build/luda bench/raw_kernel.lua
local luda = require "luda"
assert(luda.cuda.is_available(), "needs a CUDA device")

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

-- GPU time of fn in ms: median of `reps` CUDA-event timed runs after a warm-up.
local function gpu_ms(fn, reps)
  fn(); luda.cuda.synchronize()
  local times = {}
  for r = 1, reps do
    local a, b = luda.event(), luda.event()
    a:record(); fn(); b:record(); b:synchronize()
    times[r] = a:elapsed_time(b)
  end
  return median(times)
end

local src = [[
extern "C" __global__ void add(const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) z[i] = x[i] + y[i];
}
]]
local t0 = luda.clock()
local add = luda.raw_kernel(src, "add")
local small = luda.zeros(1024, "float32")
add({4}, {256}, {small, small, small, 1024})
luda.cuda.synchronize()
local cold_ms = (luda.clock() - t0) * 1e3

-- Host dispatch: time per call with no synchronization, n = 1024.
local calls = 20000
for _ = 1, 1000 do add({4}, {256}, {small, small, small, 1024}) end
luda.cuda.synchronize()
local samples = {}
for r = 1, 5 do
  local s = luda.clock()
  for _ = 1, calls do add({4}, {256}, {small, small, small, 1024}) end
  samples[r] = (luda.clock() - s) / calls * 1e6
  luda.cuda.synchronize()
end
local dispatch_us = median(samples)

-- Bandwidth: 64Mi float32 elements.
local n = 64 * 1024 * 1024
local x = luda.empty(n, "float32"); x:fill(1.5)
local y = luda.empty(n, "float32"); y:fill(2.5)
local z = luda.empty(n, "float32")
local sms = luda.device(0).multiprocessors
local add_ms = gpu_ms(function() add({sms * 8}, {256}, {x, y, z, n}) end, 20)
local copy_ms = gpu_ms(function() luda.copyto(z, x) end, 20)  -- cuMemcpyDtoDAsync, as cp.copyto
assert(z[n - 1] == 1.5 and z[0] == 1.5)
add({sms * 8}, {256}, {x, y, z, n}); assert(z[12345] == 4.0)

local bytes_copy, bytes_add = 2 * 4 * n, 3 * 4 * n
local copy_tbs = bytes_copy / (copy_ms * 1e-3) / 1e12
local add_tbs = bytes_add / (add_ms * 1e-3) / 1e12
print(string.format("device: %s", luda.device(0).name))
print(string.format("raw kernel cold first call (NVRTC + load + launch): %.1f ms", cold_ms))
print(string.format("raw kernel host dispatch, 4 args, n=1024: %.2f us per call", dispatch_us))
print(string.format("device-to-device copy 256 MiB: %.1f us = %.2f TB/s", copy_ms * 1e3, copy_tbs))
print(string.format("raw kernel add 64Mi float32: %.1f us = %.2f TB/s = %.2f of copy",
                    add_ms * 1e3, add_tbs, add_tbs / copy_tbs))
