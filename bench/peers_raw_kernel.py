"""CuPy's RawKernel on the same add as bench/raw_kernel.lua, measured the same way:
host dispatch per call (n=1024, no sync) and bandwidth on 64Mi float32 next to a copy.
    python3 bench/peers_raw_kernel.py
"""
import time

import cupy as cp

SRC = r"""
extern "C" __global__ void add(const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) z[i] = x[i] + y[i];
}
"""


def gpu_ms(fn, reps=20):
    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return sorted(times)[(len(times) - 1) // 2]


add = cp.RawKernel(SRC, "add")
small = cp.zeros(1024, cp.float32)
n_small = cp.int64(1024)
for _ in range(1000):
    add((4,), (256,), (small, small, small, n_small))
cp.cuda.Device().synchronize()
samples = []
calls = 20000
for _ in range(5):
    s = time.perf_counter()
    for _ in range(calls):
        add((4,), (256,), (small, small, small, n_small))
    samples.append((time.perf_counter() - s) / calls * 1e6)
    cp.cuda.Device().synchronize()
dispatch_us = sorted(samples)[2]

n = 64 * 1024 * 1024
x = cp.full(n, 1.5, cp.float32)
y = cp.full(n, 2.5, cp.float32)
z = cp.empty(n, cp.float32)
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
add_ms = gpu_ms(lambda: add((sms * 8,), (256,), (x, y, z, cp.int64(n))))
copy_ms = gpu_ms(lambda: cp.copyto(z, x))
copy_tbs = 8 * n / (copy_ms * 1e-3) / 1e12
add_tbs = 12 * n / (add_ms * 1e-3) / 1e12
print(f"CuPy {cp.__version__} RawKernel host dispatch, 4 args, n=1024: {dispatch_us:.2f} us per call")
print(f"CuPy device-to-device copy 256 MiB: {copy_ms * 1e3:.1f} us = {copy_tbs:.2f} TB/s")
print(f"CuPy RawKernel add 64Mi float32: {add_ms * 1e3:.1f} us = {add_tbs:.2f} TB/s = {add_tbs / copy_tbs:.2f} of copy")
