#!/bin/sh
# Fails when a layer includes what docs/architecture.md's arrows forbid:
#   dsl/      no CUDA, no Lua VM, no other layer
#   runtime/  no Lua, no dsl/jit/ops/stdlib/cli
#   jit/      no Lua VM, no ops/stdlib/cli
#   ops/      no Lua VM, no api/stdlib/cli (operations on arrays for any host)
#   api/      no Lua VM, no stdlib/cli (the public C++ API's implementation)
#   jupyter/  no Lua C API, no stdlib/ (the Jupyter kernel: xeus over cli/'s Session)
#   include/luda/  the public headers: no CUDA and no library header; only luda/lua.h,
#             the Lua bridge, includes Lua's
# and when stdlib/ holds code that is not Lua binding: every stdlib/*.cpp and *.h must
# reach the Lua C API, through lua.hpp, lua.h or lauxlib.h or a stdlib/ header that does
# (a header may instead declare `struct lua_State;`), and every .cpp must use it.
cd "${1:-.}" || exit 2
status=0
check() {  # folder, forbidden include pattern, why
  hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$1"/*.h "$1"/*.cpp 2>/dev/null)
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits" | sed "s|\$| ($3)|"
    status=1
  fi
}
check dsl "cuda|nvrtc|lua|lauxlib|runtime/|jit/|stdlib/|cli/" "dsl/ is pure: no CUDA, no Lua VM"
check runtime "lua|lauxlib|dsl/|jit/|stdlib/|cli/" "runtime/ knows no Lua and no DSL"
check jit "lua|lauxlib|stdlib/|cli/" "jit/ knows no Lua VM"
check ops "lua|lauxlib|api/|stdlib/|cli/" "ops/ serves any host: no Lua VM, no binding"
check api "lua|lauxlib|stdlib/|cli/" "api/ implements the public API without Lua; the Engine is stdlib/'s"
check jupyter "lua|lauxlib|stdlib/" "jupyter/ is the Jupyter binding over cli/'s Session: no Lua C API"
for layer in dsl runtime jit; do
  check $layer "ops/|api/" "$layer/ is below ops/ and api/, which build on it"
done
public=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda|nvrtc|dsl/|runtime/|jit/|ops/|api/|stdlib/|cli/|fmt/)' include/luda/*.h 2>/dev/null)
lua_public=$(grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](lua|lauxlib|lualib)' include/luda/*.h 2>/dev/null | grep -v '^include/luda/lua\.h$')
if [ -n "$public$lua_public" ]; then
  printf '%s\n%s\n' "$public" "$lua_public" | grep -v '^$' | sed 's|$| (the public headers need no CUDA, no library header, and Lua only in luda/lua.h)|'
  status=1
fi

# stdlib/ is the Lua binding. What reaches the Lua C API: its headers, then, until none
# is added, each stdlib/ header that includes one of those already found.
reaching='lua\.hpp|lua\.h|lauxlib\.h|luda/lua\.h'
reaches_lua() {  # file
  grep -qE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"](${reaching})[>\"]" "$1"
}
added=1
while [ $added -eq 1 ]; do
  added=0
  for h in stdlib/*.h; do
    [ -e "$h" ] || continue
    pattern=$(printf '%s' "$h" | sed 's/\./\\./g')
    case "|$reaching|" in *"|$pattern|"*) continue ;; esac
    if reaches_lua "$h"; then
      reaching="$reaching|$pattern"
      added=1
    fi
  done
done

move="stdlib/ holds only the Lua binding; move code with no Lua to ops/"
for f in stdlib/*.cpp stdlib/*.h; do
  [ -e "$f" ] || continue
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
