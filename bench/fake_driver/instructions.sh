#!/bin/sh
# Instructions per call of each case of dispatch.lua, counted by callgrind over the fake
# driver: repeatable where wall time is not (a machine shared with other work).
#   bench/fake_driver/instructions.sh [luda] [what] [calls]
# luda: the binary (default build-rel/luda: configure that build with
# -DCMAKE_BUILD_TYPE=Release); what and calls as dispatch.lua takes them (default all, 2000).
# Every luda.clock() call starts a new callgrind dump (--dump-before), so each timed loop of
# dispatch.lua is a dump of its own: a case's figure is the median of its 5 loops' totals
# divided by `calls`. The Lua loop itself is counted too (a few dozen instructions a call).
# Kernels come from $LUDA_CACHE_DIR (default a folder of this script's own under /tmp),
# warmed by a run without valgrind first, so that no compile is counted.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
luda=${1:-$root/build-rel/luda}
what=${2:-all}
calls=${3:-2000}
driver=$root/build-fake-driver
[ -f "$driver/libcuda.so.1" ] || "$here/build.sh" "$driver" >/dev/null
export LD_LIBRARY_PATH="$driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_CUDA_LAUNCH_NS=0
export LUDA_CACHE_DIR="${LUDA_CACHE_DIR:-/tmp/luda-instructions-cache}"
"$luda" "$here/dispatch.lua" "$what" 20 >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --dump-before='luda::lua::*::clock(lua_State*)' \
  --callgrind-out-file="$out/cg" "$luda" "$here/dispatch.lua" "$what" "$calls" >"$out/stdout" 2>"$out/stderr"
# The case labels, in the order dispatch.lua ran them.
grep ' us per call' "$out/stdout" | sed 's/ *[0-9.]* us per call.*//' >"$out/labels"
# Dumps in order: per case, one before its first loop, then loop, gap, loop, ... loop.
for f in $(ls "$out" | grep '^cg\.[0-9]*$' | sort -t. -k2 -n); do
  sed -n 's/^totals: *//p' "$out/$f"
done >"$out/totals"
awk -v calls="$calls" '
  NR == FNR { label[++cases] = $0; next }
  { total[++n] = $1 }
  END {
    for (c = 1; c <= cases; ++c) {
      k = 0
      for (j = 1; j <= 5; ++j) loop[++k] = total[(c - 1) * 10 + 2 * j]
      for (i = 1; i <= 5; ++i) for (j = i + 1; j <= 5; ++j) if (loop[j] < loop[i]) { t = loop[i]; loop[i] = loop[j]; loop[j] = t }
      printf "%-70s %8.0f instructions per call\n", label[c], loop[3] / calls
    }
  }' "$out/labels" "$out/totals"
