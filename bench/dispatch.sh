#!/usr/bin/env bash
# Host dispatch of a cached launch, for each kind of luda kernel, against the bare
# cuLaunchKernel floor (build/bench/launch_floor), on a GPU machine. Each program runs
# pinned to one core, and the builds named take turns with the floor, ROUNDS times, so
# that a drift of the host's speed during the run falls on all of them alike; the table
# gives each figure's median over the rounds and its ratio to the floor's median.
#   BUILDS="build-before build-gpu" bench/dispatch.sh      (default: build; FLOOR_BUILD the floor's)
# BATCH (default 200) launches at a time, the GPU waited for between them untimed: back to
# back, tiny launches fill the GPU's queue and the host then waits for the GPU, so that the
# per-call time is the GPU's per-kernel time and not the host's dispatch.
# Per call: wall time (what the benchmarks report) and CPU time of the luda process.
set -uo pipefail
cd "$(dirname "$0")/.."
builds=${BUILDS:-build}
floor_build=${FLOOR_BUILD:-${builds##* }}
rounds=${ROUNDS:-3}
core=${CORE:-3}
batch=${BATCH:-200}
out=${OUT:-/tmp/luda-dispatch}
mkdir -p "$out"
cases=${CASES:-raw_hoisted,jit,vectorize,elementwise,reduction,fuse}
: > "$out/dispatch.raw"
for r in $(seq "$rounds"); do
  taskset -c "$core" "$floor_build/bench/launch_floor" --batch "$batch" | sed -n 's/^@@ \(bare[a-z0-9_]*\) /floor \1 /p' >> "$out/dispatch.raw"
  for b in $builds; do
    for c in ${cases//,/ }; do
      DISPATCH_BATCH=$batch taskset -c "$core" "$b/luda" bench/fake_driver/dispatch.lua "$c" 20000 2>&1 |
        sed -nE "s/.* ([0-9.]+) us per call \(cpu ([0-9.]+) us\)$/$b $c \1 \2/p" >> "$out/dispatch.raw"
    done
  done
done
awk '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((n + 1) / 2)]
  }
  $1 == "floor" { floor[$2] = floor[$2] " " $3; next }
  { key = $1 SUBSEP $2; wall[key] = wall[key] " " $3; cpu[key] = cpu[key] " " $4; seen[$2] = 1; bs[$1] = 1 }
  END {
    f4 = median(floor["bare_us"]); f5 = median(floor["bare5_us"])
    printf "bare cuLaunchKernel: %.2f us (4 args), %.2f us (5 args), medians of the rounds\n\n", f4, f5
    printf "| kind | build | wall us per call | of the bare launch | cpu us per call |\n| --- | --- | --- | --- | --- |\n"
    for (k in seen) for (b in bs) {
      key = b SUBSEP k; if (!(key in wall)) continue
      base = (k ~ /raw|jit/) ? f4 : f5
      w = median(wall[key]); printf "| %s | %s | %.2f | %.2fx | %.2f |\n", k, b, w, w / base, median(cpu[key])
    }
  }' "$out/dispatch.raw" | tee "$out/dispatch.md"
