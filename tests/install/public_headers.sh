#!/usr/bin/env bash
# install.public_headers: each header of include/luda/ compiles alone as C++17 with
# warnings as errors, with no CUDA include path and, but for luda/lua.h (the Lua bridge),
# no Lua include path either: what a host that includes only it has.
#
# Usage: public_headers.sh LUDA_SOURCE_DIR LUA_INCLUDE_DIR   ($CXX names the compiler)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 LUDA_SOURCE_DIR LUA_INCLUDE_DIR" >&2; exit 2; }
cd "$1"
cxx=${CXX:-c++}
status=0
for header in include/luda/*.h; do
  flags=()
  [ "$header" = include/luda/lua.h ] && flags=(-isystem "$2")
  # A translation unit of the header alone, included twice (its guard must hold).
  name=${header#include/}
  if printf '#include <%s>\n#include <%s>\n' "$name" "$name" |
     "$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I include "${flags[@]}" -x c++ -; then
    echo "$header: compiles alone as C++17"
  else
    echo "$header: does not compile alone as C++17" >&2
    status=1
  fi
done
exit $status
