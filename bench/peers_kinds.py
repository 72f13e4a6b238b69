"""CuPy and Numba-CUDA on the kernels of bench/kinds.lua, measured the same way (CUDA-event
medians after warm-up on random data; host dispatch per call at n=1024 with outputs given,
no sync), then one Markdown table of luda, CuPy, Numba and the bare cuLaunchKernel with the
issue's bars. bench/kinds.sh runs it after luda's run and launch_floor:

    python3 bench/peers_kinds.py --luda luda.txt --floor floor.txt

--luda: the output of `build/luda bench/kinds.lua` (its `@@ key value` lines);
--floor: the output of build/bench/launch_floor. Without them it prints the peers alone.
"""
import argparse
import math
import os
import re
import statistics
import tempfile
import time

os.environ.setdefault("CUPY_CACHE_DIR", tempfile.mkdtemp())
import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # numba 0.68 still names it; numpy 2.5 removed it
import cupy as cp

N = 64 << 20
S = 8192
DISPATCH_N = 1024
REPS = 20


BATCH = 10  # calls per timed sample, as bench/kinds.lua: excludes the host's issue latency


def gpu_us(fn, reps=REPS, warm=3, batch=BATCH):
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) * 1e3 / batch)
    return statistics.median(times)


def dispatch_us(fn, calls=20000, warm=1000):
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
        cp.cuda.Device().synchronize()
    return statistics.median(samples)


def check(what, got, want, tol=4e-6):
    got, want = cp.asnumpy(got).astype(np.float64), cp.asnumpy(want).astype(np.float64)
    err = np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))
    if err > tol:
        raise AssertionError(f"{what}: differs from the float64 reference by {err:.3g}")


SQRT_2PI = math.sqrt(2 * math.pi)
cp.random.seed(5)


def uni(lo, hi, shape):
    return cp.random.uniform(lo, hi, shape, dtype=cp.float32)


res = {}  # (library, key) -> microseconds

x = uni(-1, 1, N)
w = uni(-1, 1, N)
b = uni(-1, 1, N)
z = cp.empty_like(x)
x64, w64, b64 = x.astype(cp.float64), w.astype(cp.float64), b.astype(cp.float64)

# ---- CuPy ---------------------------------------------------------------------------
res["cupy", "copy_us"] = gpu_us(lambda: cp.copyto(z, x))
ek = cp.ElementwiseKernel("T x, T w, T b", "T z", "z = (x * w) + b", "dnnLayerNode")
res["cupy", "ew_us"] = gpu_us(lambda: ek(x, w, b, z))
check("cupy ElementwiseKernel", z, x64 * w64 + b64)


@cp.fuse(kernel_name="dnnLayerNode")
def fused(x, w, b):
    return (x * w) + b


out = {}
res["cupy", "fuse_us"] = gpu_us(lambda: out.__setitem__("z", fused(x, w, b)))
check("cupy fuse", out.pop("z"), x64 * w64 + b64)
try:
    cvec = cp.vectorize(lambda x, w, b: x * w + b)
    res["cupy", "vec_us"] = gpu_us(lambda: out.__setitem__("z", cvec(x, w, b)))
    check("cupy vectorize", out.pop("z"), x64 * w64 + b64)
except Exception as ex:  # cupy.vectorize's transpiler may not take it: report, go on
    print("cupy.vectorize x*w+b failed:", type(ex).__name__, ex, flush=True)
del x64, w64, b64

g = uni(-3, 3, N)
gk = cp.ElementwiseKernel(
    "float32 x, float32 mean, float32 sigma", "float32 y",
    f"y = expf(-0.5f * ((x - mean) / sigma) * ((x - mean) / sigma)) / (sigma * {SQRT_2PI}f)", "gaussian_pdf")
res["cupy", "gpdf_us"] = gpu_us(lambda: gk(g, cp.float32(0), cp.float32(1), z))
g64 = g.astype(cp.float64)
check("cupy gaussian_pdf", z, cp.exp(-0.5 * g64 * g64) / SQRT_2PI)
del g64

r1, r2 = uni(0.5, 1.5, N), uni(0.5, 1.5, N)
t1, t2 = uni(-4, 4, N), uni(-4, 4, N)
pk = cp.ElementwiseKernel(
    "float32 r1, float32 t1, float32 r2, float32 t2", "float32 d",
    """float x1 = r1 * cosf(t1), y1 = r1 * sinf(t1), x2 = r2 * cosf(t2), y2 = r2 * sinf(t2);
       d = sqrtf((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2));""", "polar_distance")
res["cupy", "polar_us"] = gpu_us(lambda: pk(r1, t1, r2, t2, z))

res["cupy", "sum_us"] = gpu_us(lambda: x.sum())
sk = cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "plainsum")
res["cupy", "sumk_us"] = gpu_us(lambda: sk(x))
rk = cp.ReductionKernel("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnnLayer")
res["cupy", "dnn_us"] = gpu_us(lambda: rk(x, w, cp.float32(0.1)), reps=3, warm=1)  # ~50 ms a call
m = uni(-1, 1, (S, S))
res["cupy", "rows_us"] = gpu_us(lambda: m.sum(axis=1))
res["cupy", "cols_us"] = gpu_us(lambda: m.sum(axis=0))
res["cupy", "rowsk_us"] = gpu_us(lambda: sk(m, axis=1))
res["cupy", "colsk_us"] = gpu_us(lambda: sk(m, axis=0))

xs, ws, bs, zs = x[:DISPATCH_N], w[:DISPATCH_N], b[:DISPATCH_N], z[:DISPATCH_N]
z0 = cp.empty((), cp.float32)
res["cupy", "d_ew"] = dispatch_us(lambda: ek(xs, ws, bs, zs))
res["cupy", "d_red"] = dispatch_us(lambda: rk(xs, ws, cp.float32(0.1), z0))
res["cupy", "d_fuse"] = dispatch_us(lambda: fused(xs, ws, bs))
raw = cp.RawKernel(r"""
extern "C" __global__ void add(const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) z[i] = x[i] + y[i];
}""", "add")
n_small = np.int64(DISPATCH_N)
res["cupy", "d_raw"] = dispatch_us(lambda: raw((4,), (256,), (xs, ws, zs, n_small)))

# ---- Numba --------------------------------------------------------------------------
numba_version = "not available"
try:
    import numba
    from numba import cuda, vectorize

    numba_version = numba.__version__
    # Named defs only: numba-cuda builds its vectorize kernel from a template string
    # "def __vectorized_{fn.__name__}(...)", so a lambda (named "<lambda>") makes that
    # source a SyntaxError ("expected '('", line 2 of <string>).
    @vectorize(["float32(float32, float32, float32)"], target="cuda")
    def nb_layer(x, w, b):
        return x * w + b

    @vectorize(["float32(float32, float32, float32)"], target="cuda")
    def nb_gpdf(x, mean, sigma):
        return math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI)

    @cuda.jit(device=True)
    def polar_to_cartesian(rho, theta):
        return rho * math.cos(theta), rho * math.sin(theta)

    @vectorize(["float32(float32, float32, float32, float32)"], target="cuda")
    def nb_polar(rho1, theta1, rho2, theta2):
        x1, y1 = polar_to_cartesian(rho1, theta1)
        x2, y2 = polar_to_cartesian(rho2, theta2)
        return ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5

    d = cuda.as_cuda_array
    dx, dw, db, dz, dg = d(x), d(w), d(b), d(z), d(g)
    dr1, dt1, dr2, dt2 = d(r1), d(t1), d(r2), d(t2)
    dxs, dws, dbs, dzs = d(xs), d(ws), d(bs), d(zs)

    @cuda.jit
    def nb_add(x, y, out):
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            out[i] = x[i] + y[i]

    def numba_row(key, measure):
        """One row at a time, so that one failing row leaves the others' figures."""
        try:
            res["numba", key] = measure()
        except Exception as ex:
            print(f"numba {key} failed:", type(ex).__name__, ex, flush=True)

    def nb_layer_us():
        us = gpu_us(lambda: nb_layer(dx, dw, db, out=dz))
        check("numba vectorize x*w+b", z, x.astype(cp.float64) * w + b)  # dz is z's memory
        return us

    numba_row("vec_us", nb_layer_us)
    numba_row("gpdf_us", lambda: gpu_us(lambda: nb_gpdf(dg, np.float32(0), np.float32(1), out=dz)))
    numba_row("polar_us", lambda: gpu_us(lambda: nb_polar(dr1, dt1, dr2, dt2, out=dz), reps=5))
    numba_row("d_vec", lambda: dispatch_us(lambda: nb_layer(dxs, dws, dbs, out=dzs), calls=300, warm=30))
    numba_row("d_raw", lambda: dispatch_us(lambda: nb_add[4, 256](dxs, dws, dzs), calls=2000, warm=100))
except Exception as ex:  # report, keep the CuPy figures
    print("numba failed:", type(ex).__name__, ex, flush=True)

# ---- the table ----------------------------------------------------------------------
ap = argparse.ArgumentParser()
ap.add_argument("--luda")
ap.add_argument("--floor")
opts = ap.parse_args()
if opts.luda:
    with open(opts.luda) as f:
        for line in f:
            if line.startswith("@@ "):
                _, key, value = line.split(maxsplit=2)
                value = value.strip()
                try:
                    res["luda", key] = float(value)
                except ValueError:
                    res["luda", key] = value
floor, floor_what = None, ""
if opts.floor:
    with open(opts.floor) as f:
        text = f.read()
    # the 5-argument launch (x, w, b, z and a size) when launch_floor reports it, else the 4-argument one
    for key, what in (("bare5_us", "5 args"), ("bare_us", "4 args")):
        found = re.search(r"^@@ %s ([0-9.]+)$" % key, text, re.M)
        if found:
            floor, floor_what = float(found.group(1)), what
            break
    if floor is None:
        found = re.search(r"n=1024: ([0-9.]+) us", text)
        floor, floor_what = (float(found.group(1)), "4 args") if found else (None, "")

props = cp.cuda.runtime.getDeviceProperties(0)
print()
print(f"device: {props['name'].decode()}; CuPy {cp.__version__}, Numba {numba_version}; "
      f"{time.strftime('%Y-%m-%d', time.gmtime())}")
if ("luda", "n") in res and res["luda", "n"] != N:
    print(f"(luda ran with n = {res['luda', 'n']:.0f}, the peers with {N})")
print()

BW = [  # what, key, bytes moved (of n and s), bar (fraction of copy) or None
    ("device-to-device copy 256 MiB (the ceiling)", "copy_us", lambda n, s: 8 * n, None),
    ("elementwise z = x*w+b, 64Mi float32", "ew_us", lambda n, s: 16 * n, 0.93),
    ("vectorize z = x*w+b", "vec_us", lambda n, s: 16 * n, None),
    ("fuse z = x*w+b (luda out=; CuPy's fuse allocates z)", "fuse_us", lambda n, s: 16 * n, None),
    ("vectorize gaussian_pdf float32", "gpdf_us", lambda n, s: 8 * n, 0.90),
    ("vectorize polar_distance float32", "polar_us", lambda n, s: 20 * n, None),
    ("full sum 64Mi float32 (luda x:sum(), CuPy x.sum() = CUB)", "sum_us", lambda n, s: 4 * n, 0.90),
    ("full sum, reduction kernel", "sumk_us", lambda n, s: 4 * n, None),
    ("dnnLayer reduction 64Mi float32", "dnn_us", lambda n, s: 8 * n, 0.90),
    (f"row sums {S}x{S} float32", "rows_us", lambda n, s: 4 * s * s, 0.90),
    (f"column sums {S}x{S} float32", "cols_us", lambda n, s: 4 * s * s, 0.85),
    (f"row sums {S}x{S}, CuPy ReductionKernel", "rowsk_us", lambda n, s: 4 * s * s, None),
    (f"column sums {S}x{S}, CuPy ReductionKernel", "colsk_us", lambda n, s: 4 * s * s, None),
]


def bw_cell(lib, key, moved):
    """A library's time, bandwidth and fraction of its own copy (Numba: CuPy's copy)."""
    us = res.get((lib, key))
    own = (lib, "copy_us") in res
    copy = res.get((lib, "copy_us")) or res.get(("cupy", "copy_us"))
    n = res.get((lib, "n"), N) if own else N
    s = res.get((lib, "s"), S) if own else S
    if not isinstance(us, float) or not copy:
        return "—", None
    nbytes = moved(n, s)
    ratio = (nbytes / us) / (8 * n / copy)
    return f"{us:.1f} us = {nbytes / us / 1e6:.2f} TB/s = {ratio:.2f}", ratio


print("| what | luda | CuPy | Numba | bar | luda meets it |")
print("| --- | --- | --- | --- | --- | --- |")
for what, key, nbytes, bar in BW:
    cells, ratios = [], {}
    for lib in ("luda", "cupy", "numba"):
        text, ratio = bw_cell(lib, key, nbytes)
        cells.append(text)
        ratios[lib] = ratio
    verdict = ""
    if bar is not None:
        lr = ratios["luda"]
        verdict = "—" if lr is None else ("yes" if lr >= bar else "NO")
        if key == "ew_us" and lr is not None and ratios["cupy"] is not None and lr <= ratios["cupy"]:
            verdict = "NO (not faster than CuPy)"
    print(f"| {what} | {' | '.join(cells)} | {'>= %.2f of copy' % bar if bar else ''} | {verdict} |")

DISPATCH = [("vectorize", "d_vec"), ("elementwise", "d_ew"), ("reduction", "d_red"),
            ("fuse (CuPy's allocates)", "d_fuse"), ("raw kernel (Numba: cuda.jit)", "d_raw")]
floor_text = f"{floor:.2f} us, {floor_what}" if floor else "—"
for what, key in DISPATCH:
    cells = []
    for lib in ("luda", "cupy", "numba"):
        us = res.get((lib, key))
        cells.append(f"{us:.2f} us" + (f" = {us / floor:.2f}x bare" if floor else "") if isinstance(us, float) else "—")
    lu = res.get(("luda", key))
    verdict = "—" if not (floor and isinstance(lu, float)) else ("yes" if lu <= 1.3 * floor else "NO")
    print(f"| host dispatch per call, {what}, n={DISPATCH_N}, out= | {' | '.join(cells)} | "
          f"<= 1.3x bare cuLaunchKernel ({floor_text}) | {verdict} |")
