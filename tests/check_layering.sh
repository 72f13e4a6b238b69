#!/bin/sh
# Fails when a layer includes what docs/architecture.md's arrows forbid:
#   dsl/      no CUDA, no Lua VM, no other layer
#   runtime/  no Lua, no dsl/jit/stdlib/cli
#   jit/      no Lua VM, no stdlib/cli
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
[ $status -eq 0 ] && echo "layering ok"
exit $status
