#!/usr/bin/env bash
# Chunked arrays in one command on a GPU machine, in one run: luda (bench/chunked.lua),
# examples/chunked_svd.lua, then CuPy on the same figures (bench/chunked_peers.py), and the
# figures against their bars. Each program's output is kept under $OUT (or /tmp/luda-chunked).
#   OUT=dir BUILD=build-gpu bench/chunked.sh   (from the repository root; CuPy installed)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
luda=${LUDA_BIN:-$build/luda}
out=${OUT:-/tmp/luda-chunked}
mkdir -p "$out"
status=0
echo "== $luda bench/chunked.lua"
"$luda" bench/chunked.lua 2>&1 | tee "$out/luda.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== $luda examples/chunked_svd.lua"
"$luda" examples/chunked_svd.lua 2>&1 | tee "$out/chunked_svd.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== python3 bench/chunked_peers.py"
python3 bench/chunked_peers.py 2>&1 | tee "$out/peers.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
python3 - "$out" <<'PY' || status=1
import pathlib, sys
out = pathlib.Path(sys.argv[1])
f = {}
for name in ("luda.txt", "peers.txt"):
    path = out / name
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("@@ "):
            _, key, value = line.split()
            f[key] = float(value)
bars = []
if "map_blocks_overhead_us" in f:
    bars.append(("map_blocks' own cost per block at most 20 us", f"{f['map_blocks_overhead_us']:.2f} us",
                 f["map_blocks_overhead_us"] <= 20))
if "map_blocks_add_overhead_us" in f:
    bars.append(("map_blocks' own cost per block, with a kernel per block, at most 20 us",
                 f"{f['map_blocks_add_overhead_us']:.2f} us", f["map_blocks_add_overhead_us"] <= 20))
for key in sorted(k for k in f if k.startswith("chunked_") and k.endswith("_ratio") and "_burst" not in k):
    what = key[len("chunked_"):-len("_ratio")]
    burst = f.get(f"chunked_{what}_burst_ratio", float("nan"))
    bars.append((f"chunked {what} on one GPU within 1.1x of one array (blocks of the array)",
                 f"{f[key]:.3f}x ({burst:.3f}x back to back)", f[key] <= 1.1))
# Blocks apart (each its own allocation: the work visits them one by one): shown, no bar.
for key in sorted(k for k in f if k.startswith("apart_") and k.endswith("_ratio") and "_burst" not in k):
    what = key[len("apart_"):-len("_ratio")]
    burst = f.get(f"apart_{what}_burst_ratio", float("nan"))
    print(f"blocks apart: chunked {what} {f[key]:.3f}x of one array waited for, {burst:.3f}x back to back")
if "chunked_svd_ms" in f and "cupy_svd_ms" in f:
    speedup = f["cupy_svd_ms"] / f["chunked_svd_ms"]
    print(f"chunked svd {f['chunked_svd_ms']:.2f} ms, CuPy's svd of the whole array {f['cupy_svd_ms']:.2f} ms "
          f"({speedup:.2f}x), luda's one-array svd {f.get('plain_svd_ms', float('nan')):.2f} ms")
    bars.append(("chunked_svd against CuPy's svd of the whole array (faster)", f"{speedup:.2f}x", speedup >= 1))
    bars.append(("chunked svd: S within 1e-10 of the one array's, U orthonormal to 1e-10",
                 f"{max(f['chunked_svd_s_err'], f['chunked_svd_u_orth']):.1e}",
                 max(f["chunked_svd_s_err"], f["chunked_svd_u_orth"]) <= 1e-10))
print("\n| bar | figure | met |\n| --- | --- | --- |")
for what, value, ok in bars:
    print(f"| {what} | {value} | {'yes' if ok else 'NO'} |")
sys.exit(0 if bars and all(ok for _, _, ok in bars) else 1)
PY
exit "$status"
