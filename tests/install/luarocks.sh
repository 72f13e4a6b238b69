#!/usr/bin/env bash
# install.luarocks: `luarocks make` of luda's rockspec into a fresh rocks tree, then a
# stock lua5.4 with that tree's paths (`luarocks path`) requires luda from it, and
# luda.chunked (a Lua module embedded in luda.so), and runs a kernel on the cpu device.
#
# luarocks builds in the source folder (build.luarocks/): here that is a copy of the
# source tree in WORK_DIR/src, kept between runs with the sources' times so that its build
# is redone only where they changed. $LUDA_BUILD_TYPE and $CMAKE_CXX_COMPILER_LAUNCHER
# (passed on to CMake through the environment) give it the test build's flags, so that a
# compiler cache serves it; the first run without one compiles the library again.
#
# Usage: luarocks.sh LUDA_SOURCE_DIR WORK_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 LUDA_SOURCE_DIR WORK_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2/src"
work=$(cd "$2" && pwd)
fail() { echo "install.luarocks: $*" >&2; exit 1; }
command -v luarocks >/dev/null || fail "luarocks is not installed (apt-get install luarocks; scripts/setup installs it)"

# The copy: everything but build directories and what .gitignore names.
find "$work/src" -mindepth 1 -maxdepth 1 ! -name build.luarocks -exec rm -rf {} +
tar -C "$src" --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./build.luarocks \
  --exclude=./.deps --exclude=./.whl --exclude=./.gl --exclude=__pycache__ -cf - . |
  tar -C "$work/src" -xf -

rockspec=$(cd "$src" && ls luda-*.rockspec)
tree=$work/tree
rm -rf "$tree"
cd "$work/src"
start=$(date +%s)
if [ -n "${LUDA_BUILD_TYPE:-}" ]; then export CMAKE_BUILD_TYPE=$LUDA_BUILD_TYPE; fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
luarocks --lua-version=5.4 make --tree "$tree" "$rockspec" > "$work/luarocks.log" 2>&1 ||
  fail "luarocks make failed:$(printf '\n'; tail -n 60 "$work/luarocks.log")"
echo "luarocks make $rockspec: $(( $(date +%s) - start )) s"

cd "$work"
eval "$(luarocks --lua-version=5.4 --tree "$tree" path)"
# A script file: stock lua5.4 keeps no text of stdin for luda to compile a kernel from.
cat > "$work/check.lua" <<'LUA'
  local tree = ...
  local found = package.searchpath("luda", package.cpath)
  assert(found and found:sub(1, #tree) == tree, "luda is not found in the rocks tree: " .. tostring(found))
  local luda = require "luda"
  assert(tostring(luda.zeros(3)) == "array([0., 0., 0.])", tostring(luda.zeros(3)))
  assert(require "luda.chunked" == luda.chunked, "require \"luda.chunked\" does not give luda.chunked")
  local f = luda.vectorize(function(x, y) return 2 * x - y end)
  local z = f(luda.arange(5, "int64"), 3):totable()
  for i = 1, 5 do assert(z[i] == 2 * (i - 1) - 3, "element " .. i .. ": " .. tostring(z[i])) end
  print("lua5.4 loads " .. found:sub(#tree + 2) .. " and runs a kernel on " .. tostring(luda.zeros(1).device))
LUA
LUDA_DEVICE=cpu LUDA_CACHE_DIR=$work/cache lua5.4 "$work/check.lua" "$tree" ||
  fail "lua5.4 does not load luda from the rocks tree"
