#!/usr/bin/env bash
# install.package: installs a build of luda into a temporary prefix, checks what was
# installed (include/luda/ as in the source tree and no other header; libluda.so's SONAME
# and no Boost in it or needed by it; the Lua module where lua5.4 looks; the command), then
# builds a C++ host's sources against that prefix the ways its users would, with -O0, and
# runs each build on the cpu device:
#   cmake       the host's own CMakeLists.txt: find_package(luda), luda::luda
#   cmake-static  the host's *.cpp in a project of this script's linking luda::luda_static
#   pkg-config  `pkg-config --cflags --libs luda` (libluda.so)
#   pkg-config-static  `pkg-config --static --libs luda` with the archive named (-l:libluda.a)
# A build's program is the one executable it makes; it runs in the host's folder and must
# exit with 0.
#
# Usage: package.sh BUILD_DIR HOST_SOURCE_DIR   ($CMAKE and $CXX name the tools to use)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR HOST_SOURCE_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
host=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
cmake=${CMAKE:-cmake}
cxx=${CXX:-c++}
fail() { echo "install.package: $*" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/luda-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
export LUDA_DEVICE=cpu LUDA_CACHE_DIR=$work/cache

# ---- what was installed
want=$(cd "$src/include" && find . -type f | sort)
got=$(cd "$prefix/include" && find . | sort)
want_with_dirs=$(cd "$src/include" && find . | sort)
[ "$got" = "$want_with_dirs" ] ||
  fail "the installed include tree is not include/luda/ of the source tree:$(diff <(echo "$want_with_dirs") <(echo "$got") || true)"
strays=$(find "$prefix" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cuh' -o -name '*.inc' \) \
  ! -path "$prefix/include/luda/*")
[ -z "$strays" ] || fail "headers installed outside include/luda/: $strays"
echo "headers: $(echo "$want" | wc -l) public headers, nothing else"

archive=$(find "$prefix" -name libluda.a)
[ -n "$archive" ] || fail "no libluda.a under $prefix"
libdir=$(dirname "$archive")
shared=$libdir/libluda.so
[ -L "$shared" ] || fail "no libluda.so link in $libdir"
soname=$(readelf -d "$shared" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" =~ ^libluda\.so\.[0-9]+\.[0-9]+$ ]] || fail "libluda.so's SONAME is '$soname'"
[ -e "$libdir/$soname" ] || fail "no $soname in $libdir"
if readelf -d "$shared" | grep NEEDED | grep -i boost; then fail "libluda.so needs Boost"; fi
exported=$(nm -D --defined-only "$shared" | grep -E ' (jump|make|ontop)_fcontext$' || true)
[ -z "$exported" ] || fail "libluda.so exports Boost.Context's symbols: $exported"
carried=$(nm "$archive" 2>/dev/null | grep -cE ' T (jump|make|ontop)_fcontext$' || true)
[ "$carried" -eq 3 ] || fail "libluda.a defines $carried of jump_, make_ and ontop_fcontext, not 3"
echo "libraries: $(basename "$archive"), libluda.so ($soname); Boost.Context inside libluda.a, hidden in libluda.so"

# The module where a stock lua5.4 finds it: lua5.4's own cpath, /usr/local (CMake's
# default prefix) replaced by the prefix installed to.
lua5.4 - "$prefix" 2>&1 <<'LUA' ||
  local prefix = ...
  local cpath = package.cpath:gsub("/usr/local/", prefix .. "/")
  local found = package.searchpath("luda", cpath)
  assert(found and found:sub(1, #prefix) == prefix, "lua5.4 does not find luda.so in " .. prefix)
  package.cpath = cpath
  local luda = require "luda"
  assert(tostring(luda.zeros(3)) == "array([0., 0., 0.])", tostring(luda.zeros(3)))
  print("module: " .. found:sub(#prefix + 2) .. ", loaded by lua5.4")
LUA
  fail "the installed Lua module does not load"
out=$("$prefix/bin/luda" -e 'print(luda.ones(2, "int32"))') || fail "the installed luda command failed"
[ "$out" = "array([1, 1], dtype=int32)" ] || fail "the installed luda command printed '$out'"
echo "command: bin/luda runs"

# luda's MPI plugin, where the build made one: installed beside libluda.so (which needs no
# MPI), and found from the installed command and module under mpiexec, with no
# LUDA_MPI_PLUGIN to point at it.
if [ -e "$build/libluda_mpi.so" ]; then
  [ -e "$libdir/libluda_mpi.so" ] || fail "the build's libluda_mpi.so is not installed in $libdir"
  if readelf -d "$shared" | grep NEEDED | grep -i mpi; then fail "libluda.so needs MPI"; fi
  if command -v mpiexec >/dev/null; then
    unset LUDA_MPI_PLUGIN
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    script='local luda = require "luda"; local d = luda.dist
local s = d.allreduce(luda.array(d.rank() + 1)):item()
if d.rank() == 0 then print(d.size(), s) end'
    out=$(mpiexec -n 2 "$prefix/bin/luda" -e "$script" 2>&1) || fail "bin/luda under mpiexec failed: $out"
    [ "$out" = "$(printf '2\t3')" ] || fail "bin/luda under mpiexec printed '$out'"
    cpath=$(lua5.4 -e "io.write((package.cpath:gsub('/usr/local/', '$prefix/')))")
    out=$(LUA_CPATH="$cpath" mpiexec -n 2 lua5.4 -e "$script" 2>&1) || fail "lua5.4 under mpiexec failed: $out"
    [ "$out" = "$(printf '2\t3')" ] || fail "lua5.4 with luda.so under mpiexec printed '$out'"
    echo "MPI plugin: libluda_mpi.so beside libluda.so, found by bin/luda and luda.so under mpiexec"
  else
    echo "MPI plugin: libluda_mpi.so beside libluda.so (no mpiexec here to run it)"
  fi
fi

# ---- a host built against the prefix
run() {  # build-name, build directory or program
  local program=$2
  if [ -d "$program" ]; then
    program=$(find "$2" -maxdepth 1 -type f -perm -u+x)
    [ "$(echo "$program" | grep -c .)" -eq 1 ] || fail "$1: expected one program in $2, found: $program"
  fi
  (cd "$host" && "$program") > "$work/$1.out" 2>&1 ||
    fail "$1: $(basename "$program") failed:$(printf '\n'; cat "$work/$1.out")"
  echo "$1: $(basename "$program") ran: $(tail -n 1 "$work/$1.out")"
}
# CMake builds ask for C++14 (unless the host's CMakeLists.txt sets its own standard), so
# that luda's targets must raise it to the C++17 the public headers need.
cmake_build() {  # build-name, source directory
  "$cmake" -S "$2" -B "$work/$1" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_CXX_STANDARD=14 > "$work/$1.log" 2>&1 &&
    "$cmake" --build "$work/$1" -j2 >> "$work/$1.log" 2>&1 ||
    fail "$1: the build failed:$(printf '\n'; cat "$work/$1.log")"
  local found
  found=$(sed -n 's/^luda_DIR:PATH=//p' "$work/$1/CMakeCache.txt")
  [ "$found" = "$libdir/cmake/luda" ] || fail "$1: find_package(luda) found $found, not $libdir/cmake/luda"
}

cmake_build cmake "$host"
run cmake "$work/cmake"

mkdir "$work/static-project"
cat > "$work/static-project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(luda_host_static LANGUAGES CXX)
find_package(luda 0.1 REQUIRED)
file(GLOB sources "$host/*.cpp")
add_executable(host_static \${sources})
target_link_libraries(host_static PRIVATE luda::luda_static)
CMAKE
cmake_build cmake-static "$work/static-project"
if readelf -d "$work/cmake-static/host_static" | grep -q 'NEEDED.*libluda'; then
  fail "cmake-static: host_static needs libluda.so"
fi
run cmake-static "$work/cmake-static/host_static"

export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046  # pkg-config's output is a list of words
"$cxx" -std=c++17 -O0 -o "$work/pkg-config" "$host"/*.cpp $(pkg-config --cflags --libs luda) \
  -Wl,-rpath,"$libdir" || fail "pkg-config: the build failed"
readelf -d "$work/pkg-config" | grep -q "NEEDED.*\[$soname\]" || fail "pkg-config: the program does not link $soname"
run pkg-config "$work/pkg-config"

static_libs=()
for word in $(pkg-config --static --libs luda); do
  [ "$word" = -lluda ] && word=-l:libluda.a
  static_libs+=("$word")
done
# shellcheck disable=SC2046
"$cxx" -std=c++17 -O0 -o "$work/pkg-config-static" "$host"/*.cpp $(pkg-config --cflags luda) \
  "${static_libs[@]}" || fail "pkg-config-static: the build failed (${static_libs[*]})"
if readelf -d "$work/pkg-config-static" | grep -q 'NEEDED.*libluda'; then
  fail "pkg-config-static: the program needs libluda.so"
fi
run pkg-config-static "$work/pkg-config-static"
