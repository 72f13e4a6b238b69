# Fails when a layer includes what DESIGN.md's arrows forbid.
#   dsl/      no CUDA, no Lua VM, no other layer
#   runtime/  no Lua, no dsl/jit/stdlib
#   jit/      no Lua VM, no stdlib
set(violations "")
function(check_folder folder pattern why)
  file(GLOB files ${ROOT}/${folder}/*.h ${ROOT}/${folder}/*.cpp)
  foreach(f ${files})
    file(STRINGS ${f} hits REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](${pattern})")
    foreach(h ${hits})
      list(APPEND violations "${f}: ${h} (${why})")
    endforeach()
  endforeach()
  set(violations ${violations} PARENT_SCOPE)
endfunction()
check_folder(dsl "cuda|nvrtc|lua|lauxlib|runtime/|jit/|stdlib/|cli/" "dsl/ is pure: no CUDA, no Lua VM")
check_folder(runtime "lua|lauxlib|dsl/|jit/|stdlib/|cli/" "runtime/ knows no Lua and no DSL")
check_folder(jit "lua|lauxlib|stdlib/|cli/" "jit/ knows no Lua VM")
if(violations)
  list(JOIN violations "\n" msg)
  message(FATAL_ERROR "layering violations:\n${msg}")
endif()
message(STATUS "layering ok")
