"""CuPy and NumPy on bench/linalg.lua's figures, timed as luda's are (median of runs, each
waited for): matmul of two 8192 x 8192 float32 matrices (cuBLAS, as CuPy calls it), the
CuPy guide's dot of two 2048 x 2048 float32 matrices on the GPU and in NumPy, and the
host's cost of a small matmul call. Prints "@@ key value" lines for scripts.
    python3 bench/linalg_peers.py
"""
import cupy as cp
import numpy as np

from timing import median_ms  # bench/timing.py


sync = cp.cuda.Device().synchronize
n = 8192
a = cp.random.random((n, n)).astype(cp.float32)
b = cp.random.random((n, n)).astype(cp.float32)
c = cp.empty((n, n), cp.float32)
ms = median_ms(lambda: cp.matmul(a, b, out=c), sync, 10)
print(f"cupy matmul {n} x {n} float32: {ms:.3f} ms, {2 * n**3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
print(f"@@ cupy_matmul_f32_{n}_ms {ms:.4f}")

m = 2048
x = cp.random.random((m, m)).astype(cp.float32)
y = cp.random.random((m, m)).astype(cp.float32)
ms = median_ms(lambda: cp.dot(x, y), sync, 10)
print(f"cupy dot {m} x {m} float32: {ms:.3f} ms")
print(f"@@ cupy_dot_f32_{m}_gpu_ms {ms:.4f}")
hx, hy = cp.asnumpy(x), cp.asnumpy(y)
ms = median_ms(lambda: np.dot(hx, hy), lambda: None, 10)
print(f"numpy dot {m} x {m} float32: {ms:.3f} ms")
print(f"@@ numpy_dot_f32_{m}_cpu_ms {ms:.4f}")

s, calls = 16, 2000
p, q, r = cp.ones((s, s), cp.float32), cp.ones((s, s), cp.float32), cp.empty((s, s), cp.float32)


def loop():
    for _ in range(calls):
        cp.matmul(p, q, out=r)


per = median_ms(loop, sync, 5) / calls * 1e3
print(f"cupy matmul {s} x {s}, {calls} calls back to back: {per:.2f} us a call")
print(f"@@ cupy_matmul_small_us {per:.3f}")
