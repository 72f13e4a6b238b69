#!/usr/bin/env bash
# Linear algebra in one command on a GPU machine, in one run: luda (bench/linalg.lua),
# then CuPy and NumPy on the same figures (bench/linalg_peers.py), then the figures
# against their bars. Each program's output is kept under $OUT (or /tmp/luda-linalg).
#   bench/linalg.sh           (from the repository root, with build/ made, or BUILD named; CuPy installed)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
luda=${LUDA_BIN:-$build/luda}
out=${OUT:-/tmp/luda-linalg}
mkdir -p "$out"
status=0
echo "== $luda bench/linalg.lua"
"$luda" bench/linalg.lua 2>&1 | tee "$out/luda.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== python3 bench/linalg_peers.py"
python3 bench/linalg_peers.py 2>&1 | tee "$out/peers.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
python3 - "$out" <<'PY' || status=1
import pathlib, sys
f = {}
for name in ("luda.txt", "peers.txt"):
    path = pathlib.Path(sys.argv[1]) / name
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("@@ "):
            _, key, value = line.split()
            f[key] = float(value)
bars = []
if "matmul_f32_8192_ms" in f and "cupy_matmul_f32_8192_ms" in f:
    share = f["cupy_matmul_f32_8192_ms"] / f["matmul_f32_8192_ms"]
    bars.append(("matmul 8192^2 float32 at least 0.95 of cuBLAS called directly (CuPy)", f"{share:.3f}", share >= 0.95))
if "matmul_small_us" in f and "cupy_matmul_small_us" in f:
    ratio = f["matmul_small_us"] / f["cupy_matmul_small_us"]
    bars.append(("host cost of a linear-algebra call at most 1.5x CuPy's", f"{ratio:.2f}x", ratio <= 1.5))
print("| bar | figure | met |\n| --- | --- | --- |")
for what, value, ok in bars:
    print(f"| {what} | {value} | {'yes' if ok else 'NO'} |")
sys.exit(0 if bars and all(ok for _, _, ok in bars) else 1)
PY
exit "$status"
