"""CuPy on bench/chunked.lua's figures, timed as luda's are (median of runs, each waited
for): the thin SVD of a 10000 x 1000 float64 matrix (what examples/chunked_svd.lua
computes in 5000 x 1000 chunks), and x * 2 + 1 and sum of an 8192 x 8192 float32 array.
Prints "@@ key value" lines for scripts.
    python3 bench/chunked_peers.py
"""
import cupy as cp

from timing import median_ms  # bench/timing.py

sync = cp.cuda.Device().synchronize
a = cp.random.random((10000, 1000))
ms = median_ms(lambda: cp.linalg.svd(a, full_matrices=False), sync, 7)
print(f"cupy svd 10000 x 1000 float64 thin: {ms:.2f} ms")
print(f"@@ cupy_svd_ms {ms:.4f}")
n = 8192
x = cp.random.random((n, n)).astype(cp.float32)
ms = median_ms(lambda: x * 2 + 1, sync, 21)
print(f"cupy x * 2 + 1 of {n} x {n} float32: {ms:.3f} ms")
print(f"@@ cupy_x2p1_ms {ms:.4f}")
ms = median_ms(lambda: x.sum(), sync, 21)
print(f"cupy sum of {n} x {n} float32: {ms:.3f} ms")
print(f"@@ cupy_sum_ms {ms:.4f}")
