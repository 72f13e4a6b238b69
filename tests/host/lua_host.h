// What the host tests share: a lua_State of a C++ application, with Lua's standard
// libraries and luda opened in it as an application opens them.
#pragma once

#include <lua.hpp>

#include <string>

#include "stdlib/module.h"

namespace luda::test {

struct LuaHost {
  lua_State* L = luaL_newstate();
  LuaHost() {
    luaL_openlibs(L);
    luaL_requiref(L, "luda", luaopen_luda, 1);
    lua_pop(L, 1);
  }
  ~LuaHost() { lua_close(L); }
  LuaHost(const LuaHost&) = delete;
  LuaHost& operator=(const LuaHost&) = delete;

  // Calls the function on top of the stack, loaded with `status`: the error message when
  // loading or calling failed, else "".
  std::string call(int status) {
    if (status == LUA_OK) status = lua_pcall(L, 0, 0, 0);
    if (status == LUA_OK) return "";
    std::string message = lua_tostring(L, -1) ? lua_tostring(L, -1) : "(non-string error)";
    lua_pop(L, 1);
    return message;
  }
  // Runs `code` as a plain string chunk (named by its text, as luaL_loadstring names it).
  std::string run(const std::string& code) { return call(luaL_loadstring(L, code.c_str())); }
};

}  // namespace luda::test
