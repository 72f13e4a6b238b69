#!/bin/sh
# tests/check_layering.sh [ROOT]: fails when a layer includes what docs/architecture.md's
# arrows forbid. Every rule holds for a layer's whole subtree (jit/** as well as jit/*):
#   dsl/      no CUDA, no Lua VM, no other layer
#   runtime/  no Lua, no dsl/jit/ops/stdlib/cli (its MPI plugin includes mpi.h: allowed)
#   jit/      no Lua VM, no ops/stdlib/cli
#   ops/      no Lua VM, no api/stdlib/cli (operations on arrays for any host)
#   api/      no Lua VM, no stdlib/cli (the public C++ API's implementation)
#   jupyter/ (or kernel/)  no Lua C API, no stdlib/ (xeus over cli/'s Session)
#   include/luda/  the public headers: no CUDA and no library header; only luda/lua.h,
#             the Lua bridge, includes Lua's
# where Lua is lua.hpp, lua.h, lualib.h, lauxlib.h and luda/lua.h (the bridge, which
# includes them). Inside a layer, the sub-folders of docs/architecture.md's layout:
#   jit/compile/  nothing of jit/call/, jit/kinds/, jit/raw/ (text to loaded program)
#   jit/call/     nothing of jit/kinds/, jit/raw/ (the Lua-free call machinery)
#   ops/device/   nothing of ops/ outside ops/device/ (luda's own library kernels)
# A sub-folder that does not exist has nothing to check. Also fails when stdlib/ holds
# code that is not Lua binding: every stdlib/**.cpp and .h must reach the Lua C API,
# through lua.hpp, lua.h, lauxlib.h, luda/lua.h or a stdlib/ header that does (a header
# may instead declare `struct lua_State;`), and every .cpp must use it.
#
# tests/check_layering.sh --self-test [ROOT]: runs the check on a temporary copy of ROOT's
# layers with violations planted in sub-folders, and fails unless it reports exactly
# those, with their reasons (ctest layering.self_test).

if [ "${1:-}" = --self-test ]; then
  root=$(cd "${2:-.}" && pwd) || exit 2
  script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  for d in dsl runtime jit ops api stdlib cli kernel jupyter include; do
    [ -d "$root/$d" ] && cp -R "$root/$d" "$tmp/$d"
  done
  plant() {  # file, its text
    mkdir -p "$tmp/$(dirname "$1")"
    printf '%s\n' "$2" >"$tmp/$1"
  }
  plant runtime/graph/planted_hazards.h '#include "jit/program.h"'
  plant api/planted_bridge.cpp '  #  include "luda/lua.h"'
  plant ops/device/planted_sort.cpp '#include "ops/device/planted_sort.h"
#include "ops/indexing.h"
#include <luda/lua.h>'
  plant jit/compile/planted_cache.h '#include "jit/compile/disk_cache.h"
#include "jit/kinds/kinds.h"
#include "jit/raw/raw_module.h"'
  plant jit/call/planted_key.h '#include "jit/call/call_cache.h"
#include "jit/compile/nvrtc.h"
#include "jit/kinds/kinds.h"'
  plant stdlib/planted/no_lua.cpp '#include "ops/indexing.h"'
  cat >"$tmp/expected" <<'EOF'
api/planted_bridge.cpp:1:  #  include "luda/lua.h" (api/ implements the public API without Lua; the Engine is stdlib/'s)
jit/call/planted_key.h:3:#include "jit/kinds/kinds.h" (jit/call/ is the call machinery, below jit/kinds/ and jit/raw/)
jit/compile/planted_cache.h:2:#include "jit/kinds/kinds.h" (jit/compile/ turns text into a loaded program, below jit/call/, jit/kinds/ and jit/raw/)
jit/compile/planted_cache.h:3:#include "jit/raw/raw_module.h" (jit/compile/ turns text into a loaded program, below jit/call/, jit/kinds/ and jit/raw/)
ops/device/planted_sort.cpp:2:#include "ops/indexing.h" (ops/device/ is luda's own kernels, below the rest of ops/)
ops/device/planted_sort.cpp:3:#include <luda/lua.h> (ops/ serves any host: no Lua VM, no binding)
runtime/graph/planted_hazards.h:1:#include "jit/program.h" (runtime/ knows no Lua and no DSL)
stdlib/planted/no_lua.cpp: includes no Lua header (lua.hpp, lua.h, lauxlib.h) nor a stdlib/ header that does: stdlib/ holds only the Lua binding; move code with no Lua to ops/
EOF
  sh "$script" "$tmp" >"$tmp/report"
  status=$?
  if [ $status -ne 1 ]; then
    cat "$tmp/report"
    echo "layering self-test: the check exited with $status on planted violations, not 1"
    exit 1
  fi
  if ! LC_ALL=C sort "$tmp/report" | diff "$tmp/expected" -; then
    echo "layering self-test: the report differs from the planted violations (< expected, > reported)"
    exit 1
  fi
  echo "layering self-test ok: every planted violation reported, with its reason"
  exit 0
fi

cd "${1:-.}" || exit 2
status=0
directive='[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'  # up to the included path
include="^$directive"
lua='lua|lauxlib|luda/lua\.h'  # `lua` covers lua.h, lua.hpp and lualib.h
sources() {  # folder: its C++ files, sub-folders included
  [ -d "$1" ] && find "$1" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.inc' -o -name '*.cpp' \) |
    LC_ALL=C sort
}
check() {  # folder, forbidden include pattern, why[, allowed include pattern among the forbidden]
  files=$(sources "$1")
  [ -n "$files" ] || return 0
  hits=$(printf '%s\n' "$files" | xargs grep -nE "${include}($2)" /dev/null)
  [ -n "$hits" ] && [ -n "${4:-}" ] && hits=$(printf '%s\n' "$hits" | grep -vE "^[^:]*:[0-9]+:${directive}($4)")
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits" | sed "s|\$| ($3)|"
    status=1
  fi
}
check dsl "cuda|nvrtc|$lua|runtime/|jit/|stdlib/|cli/" "dsl/ is pure: no CUDA, no Lua VM"
check runtime "$lua|dsl/|jit/|stdlib/|cli/" "runtime/ knows no Lua and no DSL"
check jit "$lua|stdlib/|cli/" "jit/ knows no Lua VM"
check ops "$lua|api/|stdlib/|cli/" "ops/ serves any host: no Lua VM, no binding"
check api "$lua|stdlib/|cli/" "api/ implements the public API without Lua; the Engine is stdlib/'s"
for jupyter in jupyter kernel; do
  check $jupyter "$lua|stdlib/" "$jupyter/ is the Jupyter binding over cli/'s Session: no Lua C API"
done
for layer in dsl runtime jit; do
  check $layer "ops/|api/" "$layer/ is below ops/ and api/, which build on it"
done
check jit/compile "jit/(call|kinds|raw)/" \
  "jit/compile/ turns text into a loaded program, below jit/call/, jit/kinds/ and jit/raw/"
check jit/call "jit/(kinds|raw)/" "jit/call/ is the call machinery, below jit/kinds/ and jit/raw/"
check ops/device "ops/" "ops/device/ is luda's own kernels, below the rest of ops/" "ops/device/"

public_headers=$(sources include/luda)
if [ -n "$public_headers" ]; then
  public=$(printf '%s\n' "$public_headers" |
    xargs grep -nE "${include}(cuda|nvrtc|dsl/|runtime/|jit/|ops/|api/|stdlib/|cli/|fmt/)" /dev/null)
  lua_public=$(printf '%s\n' "$public_headers" | grep -v '^include/luda/lua\.h$' |
    xargs grep -lE "${include}($lua)" /dev/null)
  if [ -n "$public$lua_public" ]; then
    printf '%s\n%s\n' "$public" "$lua_public" | grep -v '^$' |
      sed 's|$| (the public headers need no CUDA, no library header, and Lua only in luda/lua.h)|'
    status=1
  fi
fi

# stdlib/ is the Lua binding. What reaches the Lua C API: its headers, then, until none
# is added, each stdlib/ header that includes one of those already found.
reaching='lua\.hpp|lua\.h|lauxlib\.h|luda/lua\.h'
reaches_lua() {  # file
  grep -qE "${include}(${reaching})[>\"]" "$1"
}
stdlib_files=$(sources stdlib)
added=1
while [ $added -eq 1 ]; do
  added=0
  for h in $(printf '%s\n' "$stdlib_files" | grep '\.h$'); do
    pattern=$(printf '%s' "$h" | sed 's/\./\\./g')
    case "|$reaching|" in *"|$pattern|"*) continue ;; esac
    if reaches_lua "$h"; then
      reaching="$reaching|$pattern"
      added=1
    fi
  done
done

move="stdlib/ holds only the Lua binding; move code with no Lua to ops/"
for f in $(printf '%s\n' "$stdlib_files" | grep -E '\.(h|cpp)$'); do
  case "$f" in
    *.h)
      reaches_lua "$f" || grep -qE '^[[:space:]]*struct[[:space:]]+lua_State;' "$f" ||
        { echo "$f: reaches no Lua C API: $move"; status=1; } ;;
    *)
      if ! reaches_lua "$f"; then
        echo "$f: includes no Lua header (lua.hpp, lua.h, lauxlib.h) nor a stdlib/ header that does: $move"
        status=1
      elif ! grep -qE '(^|[^A-Za-z0-9_])(lua_[A-Za-z]|luaL_)' "$f"; then
        echo "$f: uses no Lua C API: $move"
        status=1
      fi ;;
  esac
done
[ $status -eq 0 ] && echo "layering ok"
exit $status
