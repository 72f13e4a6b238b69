#!/usr/bin/env bash
# Graphs in one command on a GPU machine, in one run: the replay cost per node of a chain
# of 64 kernels against a bare driver graph and luda eager (build/bench/graph_floor), the
# batched Sobel filter and two independent branches (bench/graphs.lua), and CuPy on the
# same Sobel batches, eager and stream-captured (bench/graphs_cupy.py); then the figures
# against their bars. Each program's output is kept under $OUT (or /tmp/luda-graphs).
#   bench/graphs.sh           (from the repository root, with build/ made, or BUILD named; CuPy installed)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
luda=${LUDA_BIN:-$build/luda}
out=${OUT:-/tmp/luda-graphs}
mkdir -p "$out"
status=0
echo "== $build/bench/graph_floor"
"$build/bench/graph_floor" 2>&1 | tee "$out/floor.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== $luda bench/graphs.lua"
"$luda" bench/graphs.lua 2>&1 | tee "$out/luda.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== python3 bench/graphs_cupy.py"
python3 bench/graphs_cupy.py 2>&1 | tee "$out/cupy.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
python3 - "$out" <<'PY' || status=1
import pathlib, sys
figures = {}
for name in ("floor.txt", "luda.txt", "cupy.txt"):
    path = pathlib.Path(sys.argv[1]) / name
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("@@ "):
            _, key, value = line.split()
            figures[key] = float(value)
bars = []
def bar(what, value, ok):
    bars.append((what, value, ok))
f = figures.get
if f("luda_graph_us_per_node") is not None:
    bar("luda graph replay per node <= 1.2 us", f"{f('luda_graph_us_per_node'):.3f} us", f("luda_graph_us_per_node") <= 1.2)
    ratio = f("luda_graph_us_per_node") / f("bare_graph_us_per_node")
    bar("luda graph <= 1.15x the bare driver graph", f"{ratio:.2f}x", ratio <= 1.15)
if f("sobel_246x300_graph_ms") is not None:
    speed = f("sobel_246x300_eager_ms") / f("sobel_246x300_graph_ms")
    bar("Sobel 64 x 246x300: luda graph >= 3x luda eager", f"{speed:.2f}x", speed >= 3)
    if f("cupy_sobel_246x300_graph_ms") is not None:
        vs = f("cupy_sobel_246x300_graph_ms") / f("sobel_246x300_graph_ms")
        bar("Sobel 64 x 246x300: luda graph faster than CuPy's captured graph", f"{vs:.2f}x", vs > 1)
if f("branches_graph_ms") is not None:
    share = f("branches_graph_ms") / (2 * f("branch_ms"))
    bar("two independent branches overlap (graph well under their sum)", f"{share:.2f} of the sum", share < 0.75)
print("| bar | figure | met |\n| --- | --- | --- |")
for what, value, ok in bars:
    print(f"| {what} | {value} | {'yes' if ok else 'NO'} |")
sys.exit(0 if bars and all(ok for _, _, ok in bars) else 1)
PY
exit "$status"
