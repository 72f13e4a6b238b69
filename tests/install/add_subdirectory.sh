#!/usr/bin/env bash
# install.add_subdirectory: configures tests/install/subdir/, a host that adds luda's
# source tree with add_subdirectory and links luda::luda_static and luda::luda, with
# GoogleTest hidden from find_package. Checks that luda registered none of its tests in
# the host's tree, that the ALIAS targets give the host the public headers, C++17 and
# Lua's headers and nothing of luda's internals, and compiles the host's source with them
# (host.cpp fails to compile where it can see an internal or a CUDA header). Nothing of
# luda is compiled here: a full build of the library is install.package's (from this
# build) and install.luarocks's business.
#
# Usage: add_subdirectory.sh LUDA_SOURCE_DIR WORK_DIR   ($CMAKE and $CXX name the tools)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 LUDA_SOURCE_DIR WORK_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
work=$2
cmake=${CMAKE:-cmake}
fail() { echo "install.add_subdirectory: $*" >&2; exit 1; }

rm -rf "$work"
"$cmake" -G "Unix Makefiles" -S "$src/tests/install/subdir" -B "$work" -DLUDA_SOURCE_DIR="$src" \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CXX_STANDARD=14 \
  -DCMAKE_CXX_COMPILER="${CXX:-c++}" > "$work.log" 2>&1 ||
  fail "configuring the host failed:$(printf '\n'; cat "$work.log")"
rm -f "$work.log"

listed=$(cd "$work" && ctest -N)
echo "$listed" | grep -q '^Total Tests: 0$' || fail "tests registered in the host's tree:$(printf '\n')$listed"
echo "ctest -N in the host's tree: no tests"

# The host's compile commands (one per program): public headers and Lua's, never the
# repository root or CUDA's; C++17 although the host asked for C++14 (CMAKE_CXX_STANDARD).
commands=$(grep '"command":.*/subdir/host.cpp' "$work/compile_commands.json")
[ "$(echo "$commands" | grep -c .)" -eq 2 ] || fail "expected 2 compile commands for host.cpp:$(printf '\n')$commands"
while read -r command; do
  [[ "$command" == *"-I$src/include "* ]] || fail "no -I$src/include in: $command"
  [[ "$command" == *"lua5.4"* ]] || fail "no Lua include directory in: $command"
  [[ "$command" != *"-I$src "* && "$command" != *"-isystem $src "* ]] || fail "luda's root is on the include path: $command"
  [[ "$command" != *cuda* ]] || fail "CUDA's headers are on the include path: $command"
  # C++14 alone would give -std=gnu++14; at C++17 CMake adds no flag where that is the
  # compiler's default.
  [[ ! "$command" =~ -std=(gnu|c)\+\+(98|03|11|14) ]] || fail "not C++17: $command"
done <<< "$commands"

make -C "$work" host.o > "$work.log" 2>&1 || \
  { cat "$work.log" >&2; fail "the host's source does not compile with luda's targets"; }
rm -f "$work.log"
for program in host host_shared; do
  [ -f "$work/CMakeFiles/$program.dir/host.cpp.o" ] || fail "make host.o made no object for $program"
done
echo "host.cpp compiles with luda::luda_static and luda::luda"
