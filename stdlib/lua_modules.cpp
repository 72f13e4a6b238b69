// The modules of stdlib/lua/ in a lua_State: package.preload entries for the embedded
// texts and for luda.internal, then each module required. Lua errors while they load are
// caught by lua_pcall and thrown as luda errors once the stack holds what it held.
#include "stdlib/lua_modules.h"

#include <string>

#include "luda/lua.h"
#include "stdlib/bindings.h"
#include "stdlib/lua_module_texts.h"

namespace luda::lua {
namespace {

using detail::kEmbeddedModules;

void push(lua_State* L, std::string_view s) { lua_pushlstring(L, s.data(), s.size()); }

// require "luda.internal": what luda's Lua modules take from its C++ side and a script has
// no use for. array_metatable: the arrays' metatable (no array is made to read it: that
// would choose the default device); qr_each, kind_info, kind_call and kind_reduce
// (push_chunked_helpers, push_kind_helpers); random_* (push_random_helpers); module_chunks: each embedded module's chunk
// name -> its name, the files whose lines are luda's own rather than a caller's.
int open_internal(lua_State* L) {
  push_chunked_helpers(L);
  push_kind_helpers(L);
  push_random_helpers(L);
  luaL_getmetatable(L, kArrayType);
  lua_setfield(L, -2, "array_metatable");
  lua_createtable(L, 0, static_cast<int>(kEmbeddedModules.size()));
  for (const auto& m : kEmbeddedModules) {
    push(L, m.chunkname);
    push(L, m.name);
    lua_rawset(L, -3);
  }
  lua_setfield(L, -2, "module_chunks");
  return 1;
}

// require(name) for each argument, in order.
int require_each(lua_State* L) {
  const int n = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    lua_getglobal(L, "require");
    lua_pushvalue(L, i);
    lua_call(L, 1, 0);
  }
  return 0;
}

// package.loaded.luda = nil, and the stack back to `top`, after a failed opening: the
// half-open module is not left for require to find.
std::string give_up(lua_State* L, int top) {
  const char* message = lua_tostring(L, -1);
  std::string why = message ? message : "(error object is not a string)";
  lua_settop(L, top);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushnil(L);
  lua_setfield(L, -2, "luda");
  lua_pop(L, 1);
  return why;
}

}  // namespace

void open_lua_modules(lua_State* L) {
  const int module = lua_gettop(L);
  lua_getglobal(L, "require");
  const bool has_require = lua_isfunction(L, -1);
  lua_pop(L, 1);
  if (!has_require)
    fail("luda's Lua-written modules need Lua's package library (require): open it before luda, e.g. with "
         "luaL_openlibs(L)");
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  const int loaded = lua_gettop(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  const int preload = lua_gettop(L);
  lua_pushvalue(L, module);
  lua_setfield(L, loaded, "luda");
  // Each module fresh: one loaded by an earlier opening in this state holds that opening's
  // module table.
  lua_pushcfunction(L, open_internal);
  lua_setfield(L, preload, "luda.internal");
  lua_pushnil(L);
  lua_setfield(L, loaded, "luda.internal");
  for (const auto& m : kEmbeddedModules) {
    // The text is kept under its chunk name, as a script's is: debug.getinfo and messages
    // name the file ("luda/chunked/reduce.lua"), and a function of it can become a kernel.
    if (load_chunk(L, m.text, m.chunkname.data()) != LUA_OK) {
      std::string why = give_up(L, module);
      fail("luda's own module {} does not load: {}", m.name, why);
    }
    push(L, m.name);
    lua_insert(L, -2);
    lua_rawset(L, preload);
    push(L, m.name);
    lua_pushnil(L);
    lua_rawset(L, loaded);
  }
  lua_settop(L, module);
  lua_pushcfunction(L, require_each);
  for (const auto& m : kEmbeddedModules) push(L, m.name);
  if (lua_pcall(L, static_cast<int>(kEmbeddedModules.size()), 0, 0) != LUA_OK) {
    std::string why = give_up(L, module);
    fail("luda's own Lua modules do not load: {}", why);
  }
}

}  // namespace luda::lua
