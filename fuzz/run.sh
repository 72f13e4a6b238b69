#!/bin/sh
# fuzz/run.sh TARGET SECONDS [libFuzzer options...]
# fuzz/run.sh --build TARGET...
#
# Builds the libFuzzer target TARGET (fuzz/TARGET_fuzz.cpp) with clang, AddressSanitizer
# and UBSan into build-fuzz/ (LUDA_FUZZ_BUILD overrides), then runs it for SECONDS on the
# kept corpus fuzz/corpus/TARGET/ (frontend: also examples/ and tests/errors/, read where
# they are). Inputs it finds go to build-fuzz/corpus/TARGET/, never into the tree; a
# crash, a hang (-timeout, 10 s) or a sanitizer report stops the run with a non-zero
# status and leaves its input in build-fuzz/crashes/TARGET/. Reproduce one with:
# build-fuzz/fuzz/TARGET_fuzz build-fuzz/crashes/TARGET/<file>
#
# --build builds the targets named and runs nothing; LUDA_FUZZ_NO_BUILD=1 runs a target
# built before without touching the tree, so that several targets can run at once
# (.ci/run does both). Objects go through ccache where it is installed, with paths taken
# relative to the tree, so that another clone's build finds them in the cache.
set -eu
usage="usage: fuzz/run.sh TARGET SECONDS [libFuzzer options...] | fuzz/run.sh --build TARGET..."
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LUDA_FUZZ_BUILD:-$root/build-fuzz}

build_targets() {  # target...
  cc=${LUDA_FUZZ_CC:-clang-14}
  cxx=${LUDA_FUZZ_CXX:-clang++-14}
  command -v "$cxx" >/dev/null || { cc=clang; cxx=clang++; }
  launcher=""
  if command -v ccache >/dev/null; then
    launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
  fi
  # shellcheck disable=SC2086  # $launcher is two words or none
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_CXX_COMPILER="$cxx" -DLUDA_FUZZ=ON $launcher >/dev/null
  targets=""
  for t in "$@"; do targets="$targets ${t}_fuzz"; done
  # shellcheck disable=SC2086  # one word per target
  cmake --build "$build" --target $targets -j "${LUDA_FUZZ_JOBS:-2}"
}

if [ "${1:-}" = --build ]; then
  shift
  [ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
  build_targets "$@"
  exit 0
fi
if [ $# -lt 2 ]; then
  echo "$usage" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2
[ "${LUDA_FUZZ_NO_BUILD:-0}" = 1 ] || build_targets "$target"
mkdir -p "$build/corpus/$target" "$build/crashes/$target"
dict=""
[ -f "$root/fuzz/$target.dict" ] && dict="-dict=$root/fuzz/$target.dict"
# The corpus directories follow the libFuzzer options; new inputs go to the first one.
set -- "$@" "$build/corpus/$target" "$root/fuzz/corpus/$target"
if [ "$target" = frontend ]; then
  # Every example and every pinned error case is a seed too, without a copy to keep in step.
  set -- "$@" "$root/examples" "$root/tests/errors"
fi
# shellcheck disable=SC2086  # $dict is one word or none
exec "$build/fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$build/crashes/$target/" $dict "$@"
