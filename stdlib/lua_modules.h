// The Lua-written part of the luda module: the modules of stdlib/lua/, embedded in the
// library (a table CMake generates from the files), made findable by require in a
// lua_State and loaded when the module opens.
#pragma once

#include "stdlib/lua_support.h"

namespace luda::lua {

// With the luda module table on top of the stack (left there): makes it package.loaded.luda,
// so that the modules' require "luda" gets it while the module opens; puts each module of
// stdlib/lua/, and luda.internal (the C functions that only these modules use), in
// package.preload, so that require finds them before any file of the same name; then
// requires each. Needs Lua's package library (require).
void open_lua_modules(lua_State* L);

}  // namespace luda::lua
