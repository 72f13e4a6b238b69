#!/bin/sh
# Fails when a layer includes what DESIGN.md's arrows forbid:
#   dsl/      no CUDA, no Lua VM, no other layer
#   runtime/  no Lua, no dsl/jit/ops/stdlib/cli
#   jit/      no Lua VM, no ops/stdlib/cli
#   ops/      no Lua VM, no stdlib/cli (operations on arrays for any host)
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
check ops "lua|lauxlib|stdlib/|cli/" "ops/ serves any host: no Lua VM, no binding"
for layer in dsl runtime jit; do
  check $layer "ops/" "$layer/ is below ops/, which builds on it"
done

# stdlib/ is the Lua binding. What reaches the Lua C API: its headers, then, until none
# is added, each stdlib/ header that includes one of those already found.
reaching='lua\.hpp|lua\.h|lauxlib\.h'
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
