#!/bin/sh
# Builds the fake CUDA driver (fake_cuda.cpp: profiling luda's host overhead without a
# GPU; never used by tests) as <out>/libcuda.so.1, <out> defaulting to build-fake-driver/
# at the repository root. Use it with LD_LIBRARY_PATH=<out>, e.g.
#   bench/fake_driver/build.sh && LD_LIBRARY_PATH=$PWD/build-fake-driver build/luda bench/raw_kernel.lua
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build-fake-driver}
cuda_include=${CUDA_INCLUDE:-/usr/local/cuda/include}
mkdir -p "$out"
${CXX:-c++} -std=c++20 -O2 -g -fPIC -shared -Wall -Wextra -I"$cuda_include" \
  -Wl,-soname,libcuda.so.1 -o "$out/libcuda.so.1" "$here/fake_cuda.cpp"
echo "$out/libcuda.so.1"
