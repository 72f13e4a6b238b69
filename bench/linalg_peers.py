"""CuPy and NumPy on bench/linalg.lua's figures, timed as luda's are (median of runs, each
waited for): matmul of two 8192 x 8192 float32 and float16 matrices (cuBLAS, as CuPy calls
it) and bfloat16 ones (PyTorch, which calls cuBLAS for them), the
CuPy guide's dot of two 2048 x 2048 float32 matrices on the GPU and in NumPy, the host's
cost of a small matmul call, and cupy.linalg's svd (of luda's matrices), qr and eigh.
Prints "@@ key value" lines for scripts.
    LUDA_BENCH_OUT=dir python3 bench/linalg_peers.py
"""
import os
import pathlib

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
a16, b16 = a.astype(cp.float16), b.astype(cp.float16)
c16 = cp.empty((n, n), cp.float16)
ms = median_ms(lambda: cp.matmul(a16, b16, out=c16), sync, 10)
print(f"cupy matmul {n} x {n} float16: {ms:.3f} ms, {2 * n**3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
print(f"@@ cupy_matmul_f16_{n}_ms {ms:.4f}")
del a16, b16, c16
# CuPy has no bfloat16: PyTorch's matmul, which calls cuBLAS(Lt) for it.
try:
    import torch
    ta = torch.rand((n, n), device="cuda", dtype=torch.bfloat16)
    tb = torch.rand((n, n), device="cuda", dtype=torch.bfloat16)
    tc = torch.empty((n, n), device="cuda", dtype=torch.bfloat16)
    ms = median_ms(lambda: torch.matmul(ta, tb, out=tc), torch.cuda.synchronize, 10)
    print(f"torch matmul {n} x {n} bfloat16: {ms:.3f} ms, {2 * n**3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
    print(f"@@ torch_matmul_bf16_{n}_ms {ms:.4f}")
    ta16, tb16, tc16 = ta.half(), tb.half(), tc.half()
    ms = median_ms(lambda: torch.matmul(ta16, tb16, out=tc16), torch.cuda.synchronize, 10)
    print(f"torch matmul {n} x {n} float16: {ms:.3f} ms")
    print(f"@@ torch_matmul_f16_{n}_ms {ms:.4f}")
    del ta, tb, tc, ta16, tb16, tc16
    torch.cuda.empty_cache()
except ImportError:
    print("no PyTorch: no bfloat16 peer")

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

# The SVD of bench/linalg.lua's matrices (read from LUDA_BENCH_OUT, where it wrote them),
# thin as luda's; CuPy's singular values are written beside luda's for
# bench/linalg_accuracy.py. Then qr and eigh at luda's sizes.
out = pathlib.Path(os.environ.get("LUDA_BENCH_OUT", "/tmp/luda-linalg"))
out.mkdir(parents=True, exist_ok=True)
for m, n in ((10000, 1000), (1000, 1000)):
    path = out / f"svd_a_{m}x{n}.f64"
    h = np.fromfile(path).reshape(m, n) if path.exists() else np.random.default_rng(2026).random((m, n))
    a = cp.asarray(h)
    ms = median_ms(lambda: cp.linalg.svd(a, full_matrices=False), sync, 5)
    u, s, vh = cp.linalg.svd(a, full_matrices=False)
    k = min(m, n)
    u_orth = float(cp.abs(u.T @ u - cp.eye(k)).max())
    v_orth = float(cp.abs(vh @ vh.T - cp.eye(k)).max())
    recon = float(cp.abs((u * s) @ vh - a).max() / cp.abs(a).max())
    print(f"cupy svd {m} x {n} float64 thin: {ms:.3f} ms; |U^T U - I| {u_orth:.2e}, |V^T V - I| {v_orth:.2e}, "
          f"|U S Vh - A| / |A| {recon:.2e}")
    key = f"svd_f64_{m}x{n}_cupy"
    print(f"@@ {key}_ms {ms:.4f}\n@@ {key}_u_orth {u_orth:.3e}\n@@ {key}_v_orth {v_orth:.3e}\n@@ {key}_recon {recon:.3e}")
    cp.asnumpy(s).astype(np.float64).tofile(out / f"svd_s_{m}x{n}_cupy.f64")

a = cp.random.random((10000, 1000))
ms = median_ms(lambda: cp.linalg.qr(a), sync, 5)
print(f"cupy qr 10000 x 1000 float64 reduced: {ms:.3f} ms")
print(f"@@ cupy_qr_f64_10000x1000_ms {ms:.4f}")
b = cp.random.random((2048, 2048))
sym = b + b.T
ms = median_ms(lambda: cp.linalg.eigh(sym), sync, 5)
print(f"cupy eigh 2048 x 2048 float64: {ms:.3f} ms")
print(f"@@ cupy_eigh_f64_2048_ms {ms:.4f}")
