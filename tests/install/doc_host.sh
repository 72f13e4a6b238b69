#!/usr/bin/env bash
# install.doc_host: the complete host that docs/embedding.md shows, taken from the page as
# it is (its "// host.cpp" block and its CMake lines), built against an installed luda in
# package.sh's four ways and run on the cpu device: a host written from the page builds
# and works.
# Usage: doc_host.sh LUDA_SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 LUDA_SOURCE_DIR BUILD_DIR WORK_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$3"
work=$(cd "$3" && pwd)
page=$src/docs/embedding.md
fail() { echo "install.doc_host: $*" >&2; exit 1; }
awk '/^```cpp$/ { block = ""; inside = 1; next }
     /^```$/ && inside { inside = 0; if (block ~ /^\/\/ host\.cpp\n/) { printf "%s", block; exit } next }
     inside { block = block $0 "\n" }' "$page" > "$work/host.cpp"
[ -s "$work/host.cpp" ] || fail "docs/embedding.md has no \`\`\`cpp block starting with // host.cpp"
{
  echo "cmake_minimum_required(VERSION 3.16)"
  echo "project(doc_host LANGUAGES CXX)"
  awk '/^```cmake$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$page"
} > "$work/CMakeLists.txt"
grep -q "find_package(luda" "$work/CMakeLists.txt" || fail "docs/embedding.md's CMake block has no find_package(luda)"
exec bash "$(dirname "$0")/package.sh" "$2" "$work"
